package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/tool"
)

// A resource enters the context only when a person includes it: with
// `run --include mcp://SERVER/URI` or `@server:uri` in a prompt. The read
// is a call of the server's resource tool, mcp__<server>__resource, which
// passes the PermissionEngine like any call but is never offered to the
// model: it is held in the router Manager.Resources returns, not in the
// session's.

// ResourceToolName is the name of a server's resource tool.
func ResourceToolName(server string) string { return "mcp__" + server + "__resource" }

// resourceSchema: the URI, and the path a file:// URI names (judged as a
// path). Only Include fills them; the tool checks they agree.
const resourceSchema = `{"type":"object","properties":{"uri":{"type":"string","minLength":1},"path":{"type":"string"}},"required":["uri"],"additionalProperties":false}`

// Include is one resource a person asked to include.
type Include struct {
	Server, URI string
}

// Ref is how the include is written: mcp://SERVER/URI.
func (i Include) Ref() string { return "mcp://" + i.Server + "/" + i.URI }

// Tool is the resource tool that reads it.
func (i Include) Tool() string { return ResourceToolName(i.Server) }

// Args are the call's arguments: the URI, and for a file:// URI the path
// it names, which the engine judges as a path (a key file is credential).
func (i Include) Args() (json.RawMessage, error) {
	p, err := filePath(i.URI)
	if err != nil {
		return nil, err
	}
	args := map[string]string{"uri": i.URI}
	if p != "" {
		args["path"] = p
	}
	return json.Marshal(args)
}

// ParseInclude reads mcp://SERVER/URI.
func ParseInclude(ref string) (Include, error) {
	rest, ok := strings.CutPrefix(ref, "mcp://")
	if !ok {
		return Include{}, fmt.Errorf("include %q: want mcp://SERVER/URI", ref)
	}
	server, uri, ok := strings.Cut(rest, "/")
	if !ok || server == "" || uri == "" {
		return Include{}, fmt.Errorf("include %q: want mcp://SERVER/URI, e.g. mcp://everything/demo://resource/dynamic/text/1", ref)
	}
	i := Include{Server: server, URI: uri}
	if _, err := filePath(uri); err != nil {
		return Include{}, fmt.Errorf("include %q: %w", ref, err)
	}
	return i, nil
}

// promptRef is @server:uri in a prompt, at its start or after a space.
var promptRef = regexp.MustCompile(`(?:^|\s)@([A-Za-z0-9_.-]+):(\S+)`)

// PromptIncludes returns the resources a prompt includes as @server:uri.
// Only the names of configured servers count, so an address such as
// @alice:example stays text; a trailing . , ; ! ? or closing bracket is
// punctuation, not part of the URI.
func PromptIncludes(prompt string, servers []string) ([]Include, error) {
	var out []Include
	for _, m := range promptRef.FindAllStringSubmatch(prompt, -1) {
		if !slices.Contains(servers, m[1]) {
			continue
		}
		uri := strings.TrimRight(m[2], ".,;!?)]}'\"")
		if uri == "" {
			continue
		}
		if _, err := filePath(uri); err != nil {
			return nil, fmt.Errorf("@%s:%s in the prompt: %w", m[1], uri, err)
		}
		out = append(out, Include{Server: m[1], URI: uri})
	}
	return out, nil
}

// filePath is the local path a file:// URI names, "" for another scheme.
func filePath(uri string) (string, error) {
	if !strings.HasPrefix(strings.ToLower(uri), "file:") {
		return "", nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("the file URI %q does not parse: %w", uri, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("the file URI %q names host %q; only local files can be included", uri, u.Host)
	}
	if u.Path == "" || u.Opaque != "" {
		return "", fmt.Errorf("the file URI %q names no absolute path", uri)
	}
	return u.Path, nil
}

// ResourceTool reads a server's resources. It is judged at risk read, its
// path (for a file:// URI) as a read; resource annotations (audience,
// priority) say nothing that would raise it.
type ResourceTool struct {
	server *Server
}

// Info is the tool's metadata.
func (r *ResourceTool) Info() permission.ToolInfo { return ResourceInfo(r.server.Name) }

// ResourceInfo is the metadata of a server's resource tool.
func ResourceInfo(server string) permission.ToolInfo {
	return permission.ToolInfo{
		Name: ResourceToolName(server), Namespace: "mcp__" + server, Risk: risk.Read,
		AllowedModes: permission.ReadModes(), Kind: permission.KindRead,
		PathArgs: []string{"path"}, ResourceArg: "uri", Schema: resourceSchema,
	}
}

// Run reads the resource: its text is the call's stdout; a blob is
// described by type and size.
func (r *ResourceTool) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	s := r.server
	uri := call.String("uri")
	p, err := filePath(uri)
	if err != nil {
		return tool.Result{}, err
	}
	if call.String("path") != p {
		return tool.Result{}, fmt.Errorf("the path %q is not the one the URI %q names (%q)", call.String("path"), uri, p)
	}
	if err := s.gone(); err != nil {
		return tool.Result{}, fmt.Errorf("MCP server %s is not running (%v)%s", quote(s.Name), err, s.where())
	}
	if init := s.session.InitializeResult(); init == nil || init.Capabilities == nil || init.Capabilities.Resources == nil {
		return tool.Result{}, fmt.Errorf("MCP server %s offers no resources", quote(s.Name))
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err := s.session.ReadResource(cctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tool.Result{}, ctx.Err()
		case cctx.Err() != nil:
			return tool.Result{}, fmt.Errorf("MCP server %s did not answer reading %s within %s%s", quote(s.Name), uri, s.timeout, s.where())
		case s.gone() != nil || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF):
			return tool.Result{}, fmt.Errorf("MCP server %s stopped (%v)%s", quote(s.Name), err, s.where())
		}
		return tool.Result{}, fmt.Errorf("MCP server %s: reading %s: %w", quote(s.Name), uri, err)
	}
	var summary []map[string]any
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		if c.Blob != nil && c.Text == "" {
			summary = append(summary, map[string]any{"type": "blob", "uri": c.URI, "mimeType": c.MIMEType, "bytes": len(c.Blob)})
			fmt.Fprintf(out.Stdout, "[blob %s %s, %d bytes]\n", c.URI, c.MIMEType, len(c.Blob))
			continue
		}
		_, _ = io.WriteString(out.Stdout, c.Text)
		if !strings.HasSuffix(c.Text, "\n") {
			_, _ = io.WriteString(out.Stdout, "\n")
		}
	}
	var result tool.Result
	if len(summary) > 0 {
		result.Summary, _ = json.Marshal(map[string]any{"content": summary})
	}
	return result, nil
}

// Resources returns a router holding one resource tool per connected
// server. It is for includes only: never give it to the model.
func (m *Manager) Resources() *tool.Router {
	r := tool.NewRouter()
	for _, s := range m.Servers {
		r.Register(&ResourceTool{server: s})
	}
	return r
}

// Names are the connected servers' names.
func (m *Manager) Names() []string {
	var out []string
	for _, s := range m.Servers {
		out = append(out, s.Name)
	}
	return out
}

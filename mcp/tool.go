package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// Tool is one tool of an MCP server, as the Router holds it.
type Tool struct {
	server *Server
	def    *sdk.Tool
	hash   string
	pins   *Pins

	mu   sync.Mutex
	info permission.ToolInfo
}

// pathArgNames are argument names whose string values (or lists of
// strings) are file system paths, judged as paths.
var pathArgNames = []string{"path", "paths", "source", "destination", "src", "dst", "dest", "file", "files", "filename",
	"filepath", "file_path", "filePath", "dir", "directory", "dirname", "folder", "root", "cwd", "target", "input", "output"}

// urlArgNames are argument names whose value is a URL.
var urlArgNames = []string{"url", "uri", "endpoint", "href"}

// IsPathArg reports whether an argument name is judged as a path.
func IsPathArg(name string) bool {
	l := strings.ToLower(name)
	return slices.Contains(pathArgNames, name) || slices.Contains(pathArgNames, l) ||
		strings.HasSuffix(l, "_path") || strings.HasSuffix(l, "path") && len(l) > 4 || strings.HasSuffix(l, "_file") || strings.HasSuffix(l, "_dir")
}

// validToolName is the MCP specification's advice for tool names: 1 to
// 128 letters, digits, '_', '-' and '.'. A name is matched as a rule's
// tool glob (a tool named "*" would make "allow for this session" cover
// every tool of its server) and shown in questions, so no other is taken.
func validToolName(n string) bool {
	if n == "" || len(n) > 128 {
		return false
	}
	for i := 0; i < len(n); i++ {
		switch c := n[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

func newTool(s *Server, d *sdk.Tool, pins *Pins) (*Tool, error) {
	if !validToolName(d.Name) {
		return nil, fmt.Errorf("its name holds characters other than letters, digits, '_', '-' and '.' (or is empty, or over 128): a rule would read them as a glob, and a question would show them")
	}
	schema, props, err := objectSchema(d.InputSchema)
	if err != nil {
		return nil, err
	}
	name := "mcp__" + s.Name + "__" + d.Name
	info := permission.ToolInfo{
		Name: name, Namespace: "mcp__" + s.Name, Risk: Risk(d.Annotations),
		AllowedModes: permission.ActingModes(), Kind: permission.KindOther,
		// An MCP server may write what it is given; readOnlyHint lowers
		// nothing, so its paths are judged as writes.
		PathsWrite: true, Schema: schema,
	}
	for _, p := range props {
		switch {
		case IsPathArg(p):
			info.PathArgs = append(info.PathArgs, p)
		case info.URLArg == "" && slices.Contains(urlArgNames, strings.ToLower(p)):
			info.URLArg = p
		}
	}
	t := &Tool{server: s, def: d, hash: Hash(d), pins: pins, info: info}
	if pins != nil {
		if old, ok := pins.Get(name); ok && old != t.hash {
			t.info.Changed = &permission.DefinitionChange{Approved: old, Offered: t.hash}
		}
	}
	return t, nil
}

// objectSchema returns the input schema as JSON text with "type":"object",
// and its property names, sorted.
func objectSchema(in any) (string, []string, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return "", nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		m = map[string]any{}
	}
	if t, ok := m["type"]; ok && t != "object" {
		return "", nil, fmt.Errorf("its inputSchema is of type %v, not object", t)
	}
	m["type"] = "object"
	// A $schema naming a draft the validator would have to fetch is
	// dropped: the schema is read as the default draft.
	delete(m, "$schema")
	var props []string
	if p, ok := m["properties"].(map[string]any); ok {
		for k := range p {
			props = append(props, k)
		}
	}
	slices.Sort(props)
	b, err = json.Marshal(m)
	return string(b), props, err
}

// Info is the tool's metadata, with Changed set while its definition
// differs from the one pinned.
func (t *Tool) Info() permission.ToolInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.info
}

// Server is the server the tool belongs to.
func (t *Tool) Server() *Server { return t.server }

// Definition is the tool as the server described it.
func (t *Tool) Definition() *sdk.Tool { return t.def }

// Hash is the hash of its definition.
func (t *Tool) Hash() string { return t.hash }

// Run calls the tool on its server. It runs only once the executor has an
// allow, from a rule or an answer: that is when its definition is pinned.
func (t *Tool) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	s := t.server
	if err := s.gone(); err != nil {
		return tool.Result{}, fmt.Errorf("MCP server %s is not running (%v)%s; its other tools fail too, the built-in tools still work", quote(s.Name), err, s.where())
	}
	if t.pins != nil {
		if err := t.pins.Set(t.info.Name, t.hash); err != nil {
			return tool.Result{}, fmt.Errorf("recording the definition of %s: %w", t.info.Name, err)
		}
		t.mu.Lock()
		t.info.Changed = nil
		t.mu.Unlock()
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	res, err := s.session.CallTool(cctx, &sdk.CallToolParams{Name: t.def.Name, Arguments: args})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tool.Result{}, ctx.Err()
		case cctx.Err() != nil:
			return tool.Result{}, fmt.Errorf("MCP server %s did not answer %s within %s%s", quote(s.Name), t.def.Name, s.timeout, s.where())
		case s.gone() != nil || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return tool.Result{}, fmt.Errorf("MCP server %s stopped (%v)%s; its tools are unavailable, the built-in tools still work", quote(s.Name), err, s.where())
		}
		return tool.Result{}, fmt.Errorf("MCP server %s: %s: %w%s", quote(s.Name), t.def.Name, err, s.where())
	}
	summary, text := writeContent(out.Stdout, res)
	r := tool.Result{}
	if len(summary) > 0 {
		r.Summary, _ = json.Marshal(map[string]any{"content": summary})
	}
	if res.IsError {
		if len(text) > 2000 {
			text = text[:2000] + "…"
		}
		return r, fmt.Errorf("%s reported an error: %s", t.info.Name, text)
	}
	return r, nil
}

// writeContent writes a result's text (and structured content) to w, and
// describes what is not text by type and size.
func writeContent(w io.Writer, res *sdk.CallToolResult) (summary []map[string]any, text string) {
	var b strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
			if !strings.HasSuffix(c.Text, "\n") {
				b.WriteByte('\n')
			}
		case *sdk.ImageContent:
			summary = append(summary, map[string]any{"type": "image", "mimeType": c.MIMEType, "bytes": decodedLen(c.Data)})
			fmt.Fprintf(&b, "[image %s, %d bytes]\n", c.MIMEType, decodedLen(c.Data))
		case *sdk.AudioContent:
			summary = append(summary, map[string]any{"type": "audio", "mimeType": c.MIMEType, "bytes": decodedLen(c.Data)})
			fmt.Fprintf(&b, "[audio %s, %d bytes]\n", c.MIMEType, decodedLen(c.Data))
		case *sdk.ResourceLink:
			e := map[string]any{"type": "resource_link", "uri": c.URI, "mimeType": c.MIMEType}
			if c.Size != nil {
				e["bytes"] = *c.Size
			}
			summary = append(summary, e)
			fmt.Fprintf(&b, "[resource link %s %s]\n", c.URI, c.MIMEType)
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				if c.Resource.Text != "" {
					b.WriteString(c.Resource.Text)
					b.WriteByte('\n')
				} else {
					summary = append(summary, map[string]any{"type": "resource", "uri": c.Resource.URI, "mimeType": c.Resource.MIMEType, "bytes": len(c.Resource.Blob)})
					fmt.Fprintf(&b, "[resource %s %s, %d bytes]\n", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob))
				}
			}
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j)
			b.WriteByte('\n')
		}
	}
	text = b.String()
	_, _ = io.WriteString(w, text)
	return summary, text
}

// decodedLen is the size of data; the SDK decodes base64 already, so it
// is len(data) unless it still looks like base64 text.
func decodedLen(data []byte) int {
	if n, err := base64.StdEncoding.DecodeString(string(data)); err == nil && len(data) > 0 {
		return len(n)
	}
	return len(data)
}

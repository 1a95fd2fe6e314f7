// Package config reads custom-agent's configuration files (DESIGN.md §8)
// strictly and merges them with the environment and flags: flags beat the
// environment, the environment beats the project file, the project file
// beats the user file. Every merged value says where it came from.
//
// The package is pure: callers read the files and pass their bytes, the
// environment as a function, and whether the project is trusted.
package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/strictjson"
)

// Version is the configuration file version this package reads.
const Version = 1

// FileName is the name of the project and user configuration files, beside
// policy.json: .custom-agent/config.json and
// $XDG_CONFIG_HOME/custom-agent/config.json.
const FileName = "config.json"

// Environment variables that stand for keys of the file.
const (
	EnvModel          = "CUSTOM_AGENT_MODEL"
	EnvMaxOutputBytes = "CUSTOM_AGENT_MAX_OUTPUT_BYTES"
	// EnvStore chooses the event log: "sqlite" (the default, in the data
	// directory) or a postgres:// URL.
	EnvStore = "CUSTOM_AGENT_STORE"
)

// providerEnv names the environment variable that sets each provider's
// base URL.
var providerEnv = map[string]string{"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}

// Provider is a model provider's endpoint. Its key comes from the
// environment, never from a file.
type Provider struct {
	BaseURL string `json:"baseURL"`
}

// Server is one MCP server, in the shape Claude Desktop, Cursor and Claude
// Code use: a command for stdio, or a url for streamable HTTP.
type Server struct {
	Type    string            `json:"type,omitempty"` // "stdio" or "http"; "" means from command or url
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout is how long starting the server and each call may take; 0
	// means the default.
	Timeout time.Duration `json:"-"`
}

// Transport is "stdio" or "http".
func (s Server) Transport() string {
	if s.Type != "" {
		return s.Type
	}
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// Level names where a value came from.
type Level string

const (
	LevelDefault Level = "default"
	LevelUser    Level = "user"
	LevelProject Level = "project"
	LevelEnv     Level = "env"
	LevelFlag    Level = "flag"
)

// Source is where a value came from: the level and the file position,
// variable or flag.
type Source struct {
	Level Level  `json:"level"`
	From  string `json:"from,omitempty"` // "/p/.custom-agent/config.json:3:12", "CUSTOM_AGENT_MODEL", "--model"
}

func (s Source) String() string {
	if s.From == "" {
		return string(s.Level)
	}
	return string(s.Level) + " " + s.From
}

// File is one configuration file read strictly. Only the keys it sets are
// in Set; Pos holds where each one is written.
type File struct {
	Path string
	Set  map[string]any // "model", "mode", …, "providers.NAME", "mcpServers.NAME"
	Pos  map[string]string
}

// Keys lists the keys of a configuration file, for error messages.
const Keys = "version, model, providers, approvalTimeout, mode, maxOutputBytes, mcpServers, builtinRules, sandbox, store"

// Parse reads one configuration file strictly: an unknown key or a value
// of the wrong type is an *Error naming path:line:col.
func Parse(path string, src []byte) (*File, error) {
	r := &reader{path: path, src: src}
	root, err := r.parse()
	if err != nil {
		return nil, err
	}
	if root.Kind != strictjson.Object {
		return nil, r.errAt(root.Off, "", fmt.Errorf("a configuration file is a JSON object, not a %s", root.Kind))
	}
	f := &File{Path: path, Set: map[string]any{}, Pos: map[string]string{}}
	set := func(key string, off int, v any) {
		f.Set[key] = v
		l, c := strictjson.Position(src, off)
		f.Pos[key] = path + ":" + strconv.Itoa(l) + ":" + strconv.Itoa(c)
	}
	for i := range root.Items {
		key, v, koff := root.Items[i].Key, &root.Items[i].Value, root.Items[i].KeyOff
		switch key {
		case "version":
			n, err := r.int(v, key)
			if err != nil {
				return nil, err
			}
			if n != Version {
				return nil, r.errAt(v.Off, key, fmt.Errorf("%d is not supported (this custom-agent reads version %d)", n, Version))
			}
		case "model":
			s, err := r.str(v, key)
			if err != nil {
				return nil, err
			}
			if err := CheckModel(s); err != nil {
				return nil, r.errAt(v.Off, key, err)
			}
			set(key, v.Off, s)
		case "mode":
			s, err := r.str(v, key)
			if err != nil {
				return nil, err
			}
			if _, err := permission.ParseMode(s); err != nil {
				return nil, r.errAt(v.Off, key, err)
			}
			set(key, v.Off, s)
		case "approvalTimeout":
			s, err := r.str(v, key)
			if err != nil {
				return nil, err
			}
			d, err := ParseTimeout(s)
			if err != nil {
				return nil, r.errAt(v.Off, key, err)
			}
			set(key, v.Off, d)
		case "maxOutputBytes":
			var s string
			switch v.Kind {
			case strictjson.Number:
				s = v.Str
			case strictjson.String:
				s = v.Str
			default:
				return nil, r.errAt(v.Off, key, fmt.Errorf("%s is not a size (a number of bytes, or a string such as \"512MiB\")", v.Kind))
			}
			n, err := ParseSize(s)
			if err != nil {
				return nil, r.errAt(v.Off, key, err)
			}
			set(key, v.Off, n)
		case "store":
			s, err := r.str(v, key)
			if err != nil {
				return nil, err
			}
			if err := CheckStore(s); err != nil {
				return nil, r.errAt(v.Off, key, err)
			}
			set(key, v.Off, s)
		case "sandbox":
			if v.Kind != strictjson.String || (v.Str != "on" && v.Str != "off") {
				return nil, r.errAt(v.Off, key, fmt.Errorf("sandbox is \"on\" or \"off\""))
			}
			set(key, v.Off, v.Str)
		case "builtinRules":
			if v.Kind != strictjson.Bool {
				return nil, r.errAt(v.Off, key, fmt.Errorf("%s is not a boolean", v.Kind))
			}
			set(key, v.Off, v.Bool)
		case "providers":
			if err := r.object(v, key); err != nil {
				return nil, err
			}
			for j := range v.Items {
				m := &v.Items[j]
				p, err := parseProvider(r, "providers."+m.Key, &m.Value)
				if err != nil {
					return nil, err
				}
				set("providers."+m.Key, m.KeyOff, p)
			}
		case "mcpServers":
			if err := r.object(v, key); err != nil {
				return nil, err
			}
			for j := range v.Items {
				m := &v.Items[j]
				if err := CheckServerName(m.Key); err != nil {
					return nil, r.errAt(m.KeyOff, "mcpServers", err)
				}
				s, err := parseServer(r, "mcpServers."+m.Key, &m.Value)
				if err != nil {
					return nil, err
				}
				set("mcpServers."+m.Key, m.KeyOff, s)
			}
		default:
			return nil, r.errAt(koff, "", fmt.Errorf("unknown key %q (a configuration file has %s)", key, Keys))
		}
	}
	return f, nil
}

func parseProvider(r *reader, key string, v *strictjson.Value) (Provider, error) {
	var p Provider
	if err := r.object(v, key); err != nil {
		return p, err
	}
	for i := range v.Items {
		m := &v.Items[i]
		switch k := m.Key; k {
		case "baseURL":
			s, err := r.str(&m.Value, key+"."+k)
			if err != nil {
				return p, err
			}
			if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return p, r.errAt(m.Value.Off, key+"."+k, fmt.Errorf("%q is not an http or https URL", s))
			}
			p.BaseURL = s
		case "apiKey", "key", "token":
			return p, r.errAt(m.KeyOff, key, fmt.Errorf("%q: keys and tokens come from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY), never from a configuration file", k))
		default:
			return p, r.errAt(m.KeyOff, key, fmt.Errorf("unknown key %q (a provider has baseURL)", k))
		}
	}
	return p, nil
}

func parseServer(r *reader, key string, v *strictjson.Value) (Server, error) {
	var s Server
	if err := r.object(v, key); err != nil {
		return s, err
	}
	for i := range v.Items {
		k := v.Items[i].Key
		val, at := &v.Items[i].Value, key+"."+k
		var err error
		switch k {
		case "type":
			s.Type, err = r.str(val, at)
			if err == nil && s.Type != "stdio" && s.Type != "http" {
				err = r.errAt(val.Off, at, fmt.Errorf("%q is not supported (want stdio or http; streamable HTTP is \"http\")", s.Type))
			}
		case "command":
			s.Command, err = r.str(val, at)
		case "args":
			s.Args, err = r.strings(val, at)
		case "env":
			s.Env, err = r.stringMap(val, at)
		case "cwd":
			s.Cwd, err = r.str(val, at)
		case "url":
			s.URL, err = r.str(val, at)
			if err == nil {
				if u, perr := url.Parse(s.URL); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					err = r.errAt(val.Off, at, fmt.Errorf("%q is not an http or https URL", s.URL))
				}
			}
		case "headers":
			s.Headers, err = r.stringMap(val, at)
		case "timeout":
			var t string
			if t, err = r.str(val, at); err == nil {
				if s.Timeout, err = ParseTimeout(t); err != nil {
					err = r.errAt(val.Off, at, err)
				}
			}
		default:
			err = r.errAt(v.Items[i].KeyOff, key, fmt.Errorf("unknown key %q (a server has command, args, env, cwd and timeout, or type \"http\", url, headers and timeout)", k))
		}
		if err != nil {
			return s, err
		}
	}
	switch s.Transport() {
	case "stdio":
		if s.Command == "" {
			return s, r.errAt(v.Off, key, errors.New("no \"command\": a stdio server needs the command that starts it (or give \"url\" for an HTTP server)"))
		}
		if s.URL != "" || s.Headers != nil {
			return s, r.errAt(v.Off, key, errors.New("a stdio server has no \"url\" or \"headers\""))
		}
	case "http":
		if s.URL == "" {
			return s, r.errAt(v.Off, key, errors.New("no \"url\": an http server needs its endpoint"))
		}
		if s.Command != "" || s.Args != nil || s.Env != nil || s.Cwd != "" {
			return s, r.errAt(v.Off, key, errors.New("an http server has no \"command\", \"args\", \"env\" or \"cwd\""))
		}
	}
	return s, nil
}

// CheckModel checks a model spec "provider:name".
func CheckModel(s string) error {
	if p, name, ok := strings.Cut(s, ":"); !ok || p == "" || name == "" {
		return fmt.Errorf("%q is not provider:name, e.g. openai:gpt-4.1", s)
	}
	return nil
}

// CheckStore checks an event log choice: "sqlite" or a postgres:// (or
// postgresql://) URL naming a host and a database.
func CheckStore(s string) error {
	if s == "sqlite" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fmt.Errorf("%q is not \"sqlite\" or a postgres://USER@HOST:PORT/DATABASE URL", RedactStore(s))
	}
	if strings.Trim(u.Path, "/") == "" {
		return fmt.Errorf("%q names no database: postgres://USER@HOST:PORT/DATABASE", RedactStore(s))
	}
	return nil
}

// RedactStore is a store URL with its password, if any, replaced by
// "xxxxx", for messages and config show.
func RedactStore(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if err != nil && strings.Contains(s, "@") {
			return "(a URL that does not parse)"
		}
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// CheckServerName checks an MCP server's name: it becomes part of tool
// names (mcp__NAME__tool), so letters, digits, '-' and '_' only, and no
// "__".
func CheckServerName(name string) error {
	ok := name != "" && !strings.Contains(name, "__")
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("server name %q: use letters, digits, '-' and '_' (no \"__\"), since tools are named mcp__<server>__<tool>", name)
	}
	return nil
}

// ParseTimeout reads a positive duration such as 30s or 2m.
func ParseTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as 30s or 2m", s)
	}
	return d, nil
}

// modeRank orders the modes from the strictest: plan runs only reads;
// dont-ask runs what default would run without a question; accept-edits
// runs edits default would ask.
var modeRank = map[permission.Mode]int{
	permission.ModePlan: 0, permission.ModeDontAsk: 1, permission.ModeDefault: 2, permission.ModeAcceptEdits: 3,
}

// Config is the merged configuration. A field is its zero value when no
// level set it; Sources says, for every key set, where it came from.
type Config struct {
	Model           string              `json:"model,omitempty"`
	Providers       map[string]Provider `json:"providers,omitempty"`
	ApprovalTimeout time.Duration       `json:"-"`
	Mode            string              `json:"mode,omitempty"`
	MaxOutputBytes  int64               `json:"maxOutputBytes,omitempty"`
	MCPServers      map[string]Server   `json:"mcpServers,omitempty"`
	// BuiltinRules is nil when no level set it (the built-in rules apply).
	BuiltinRules *bool `json:"builtinRules,omitempty"`
	// Sandbox is "off" when the sandbox is turned off on purpose; "" or
	// "on" leaves it on. A project file can never turn it off.
	Sandbox string `json:"sandbox,omitempty"`
	// Store is the event log: "" or "sqlite" for the data directory's
	// SQLite file, or a postgres:// URL. Only the user's own file, the
	// environment or a flag choose it: a project file never redirects the
	// log.
	Store string `json:"store,omitempty"`
	// Sources maps each key set ("model", "providers.openai",
	// "mcpServers.fs", …) to where its value came from.
	Sources map[string]Source `json:"sources"`
	// Warnings are keys of an untrusted project that were ignored.
	Warnings []string `json:"warnings,omitempty"`
}

// Flags are the command-line flags that stand for keys; a zero field is a
// flag not given.
type Flags struct {
	Model           string
	Mode            string
	ApprovalTimeout time.Duration
	MaxOutputBytes  string
	NoBuiltinRules  bool
	// Sandbox is --sandbox: "on", "off" or "" (not given).
	Sandbox string
	// Store is --store: "sqlite", a postgres:// URL or "" (not given).
	Store string
}

// Inputs are what Merge merges. User and Project may be nil (no file).
type Inputs struct {
	User, Project *File
	// ProjectTrusted is whether the user trusts the project
	// (custom-agent trust); ProjectRoot is its directory, for the warning.
	ProjectTrusted bool
	ProjectRoot    string
	Getenv         func(string) string
	Flags          Flags
}

// risky reports whether an untrusted project may not set key: it would run
// code (mcpServers), send data elsewhere (providers, model) or loosen a
// decision (a more permissive mode, built-in rules turned back on).
func risky(key string, v any, c *Config) bool {
	switch {
	case key == "model", strings.HasPrefix(key, "providers."), strings.HasPrefix(key, "mcpServers."):
		return true
	case key == "mode":
		cur := c.Mode
		if cur == "" {
			cur = "default"
		}
		return modeRank[permission.Mode(v.(string))] > modeRank[permission.Mode(cur)]
	case key == "builtinRules":
		return v.(bool) && c.BuiltinRules != nil && !*c.BuiltinRules
	}
	return false
}

// EnvSandbox turns the sandbox off ("off") or on ("on").
const EnvSandbox = "CUSTOM_AGENT_SANDBOX"

// Merge merges the levels: flags, then the environment, then the project
// file, then the user file. An untrusted project's risky keys are dropped
// with a warning.
func Merge(in Inputs) (*Config, error) {
	c := &Config{Providers: map[string]Provider{}, MCPServers: map[string]Server{}, Sources: map[string]Source{}}
	getenv := in.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	apply := func(key string, v any, src Source) {
		c.Sources[key] = src
		switch {
		case key == "model":
			c.Model = v.(string)
		case key == "mode":
			c.Mode = v.(string)
		case key == "approvalTimeout":
			c.ApprovalTimeout = v.(time.Duration)
		case key == "maxOutputBytes":
			c.MaxOutputBytes = v.(int64)
		case key == "builtinRules":
			b := v.(bool)
			c.BuiltinRules = &b
		case key == "sandbox":
			c.Sandbox = v.(string)
		case key == "store":
			c.Store = v.(string)
		case strings.HasPrefix(key, "providers."):
			c.Providers[strings.TrimPrefix(key, "providers.")] = v.(Provider)
		case strings.HasPrefix(key, "mcpServers."):
			c.MCPServers[strings.TrimPrefix(key, "mcpServers.")] = v.(Server)
		}
	}
	if f := in.User; f != nil {
		for _, k := range slices.Sorted(maps.Keys(f.Set)) {
			apply(k, f.Set[k], Source{Level: LevelUser, From: f.Pos[k]})
		}
	}
	if f := in.Project; f != nil {
		var ignored []string
		for _, k := range slices.Sorted(maps.Keys(f.Set)) {
			if k == "sandbox" {
				// The repository must not switch off what confines
				// it, trusted or not.
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: ignored sandbox: only your own configuration, an environment variable or a flag can turn the sandbox off or on", f.Path))
				continue
			}
			if k == "store" {
				// The repository must not send the log of what is
				// done in it elsewhere, trusted or not.
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: ignored store: a project cannot choose where the event log is written; only your own configuration (%s), %s or --store can", f.Path, FileName, EnvStore))
				continue
			}
			if !in.ProjectTrusted && risky(k, f.Set[k], c) {
				ignored = append(ignored, k)
				continue
			}
			apply(k, f.Set[k], Source{Level: LevelProject, From: f.Pos[k]})
		}
		if len(ignored) > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf(
				"%s: ignored %s: the project %s is not trusted, and these keys would run code, send data elsewhere or loosen a decision; if you trust it, run `custom-agent trust %s`",
				f.Path, strings.Join(ignored, ", "), in.ProjectRoot, shellQuote(in.ProjectRoot)))
		}
	}
	if v := getenv(EnvModel); v != "" {
		if err := CheckModel(v); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvModel, err)
		}
		apply("model", v, Source{Level: LevelEnv, From: EnvModel})
	}
	if v := strings.TrimSpace(getenv(EnvMaxOutputBytes)); v != "" {
		n, err := ParseSize(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvMaxOutputBytes, err)
		}
		apply("maxOutputBytes", n, Source{Level: LevelEnv, From: EnvMaxOutputBytes})
	}
	if v := strings.TrimSpace(getenv(EnvSandbox)); v != "" {
		if v != "on" && v != "off" {
			return nil, fmt.Errorf("%s=%q: want on or off", EnvSandbox, v)
		}
		apply("sandbox", v, Source{Level: LevelEnv, From: EnvSandbox})
	}
	if v := strings.TrimSpace(getenv(EnvStore)); v != "" {
		if err := CheckStore(v); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvStore, err)
		}
		apply("store", v, Source{Level: LevelEnv, From: EnvStore})
	}
	for _, p := range slices.Sorted(maps.Keys(providerEnv)) {
		if v := getenv(providerEnv[p]); v != "" {
			apply("providers."+p, Provider{BaseURL: v}, Source{Level: LevelEnv, From: providerEnv[p]})
		}
	}
	fl := in.Flags
	if fl.Model != "" {
		if err := CheckModel(fl.Model); err != nil {
			return nil, fmt.Errorf("--model: %w", err)
		}
		apply("model", fl.Model, Source{Level: LevelFlag, From: "--model"})
	}
	if fl.Mode != "" {
		if _, err := permission.ParseMode(fl.Mode); err != nil {
			return nil, err
		}
		apply("mode", fl.Mode, Source{Level: LevelFlag, From: "--mode"})
	}
	if fl.ApprovalTimeout != 0 {
		if fl.ApprovalTimeout < 0 {
			return nil, errors.New("--approval-timeout must be positive")
		}
		apply("approvalTimeout", fl.ApprovalTimeout, Source{Level: LevelFlag, From: "--approval-timeout"})
	}
	if fl.MaxOutputBytes != "" {
		n, err := ParseSize(fl.MaxOutputBytes)
		if err != nil {
			return nil, fmt.Errorf("--max-output-bytes: %w", err)
		}
		apply("maxOutputBytes", n, Source{Level: LevelFlag, From: "--max-output-bytes"})
	}
	if fl.NoBuiltinRules {
		apply("builtinRules", false, Source{Level: LevelFlag, From: "--no-builtin-rules"})
	}
	if fl.Store != "" {
		if err := CheckStore(fl.Store); err != nil {
			return nil, fmt.Errorf("--store: %w", err)
		}
		apply("store", fl.Store, Source{Level: LevelFlag, From: "--store"})
	}
	switch fl.Sandbox {
	case "":
	case "on", "off":
		apply("sandbox", fl.Sandbox, Source{Level: LevelFlag, From: "--sandbox"})
	default:
		return nil, fmt.Errorf("--sandbox %q: want on or off", fl.Sandbox)
	}
	return c, nil
}

// ProviderEnv returns the environment variable for a provider's base URL.
func ProviderEnv(provider string) (string, bool) {
	v, ok := providerEnv[provider]
	return v, ok
}

// shellQuote quotes a path for a command line when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package web

import (
	"context"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// Get is the http_get tool: {url, headers?}. It makes one GET request and
// writes the response to stdout:
//
//	HTTP/1.1 200 OK
//	Content-Type: text/html; charset=utf-8
//	Content-Length: 1234
//
//	<the body>
//
// Only Content-Type, Content-Length and Location are shown. A text body is
// written as it is, cut after MaxBody bytes with a last line "[body
// truncated at 5 MiB]"; a binary body is summarised as "<N bytes of
// image/png>". A redirect is not followed: after the headers comes "the
// server redirects to URL; call http_get on that URL to follow it (it is
// judged again as a new request)". Result.Summary is
// {"status":200,"bytes":N,"truncated":false}, with "location" for a
// redirect. Any status is a completion; a transport failure (no such host,
// a refused address, the 30 s timeout) is a tool error naming the URL.
//
// A Get is safe for concurrent use.
type Get struct{ f *fetcher }

// Post is the http_post tool: {url, body, headers?}; it sends body with
// POST and answers as Get does. Without a Content-Type header the body is
// sent as application/json when it is a JSON object or array, else as
// text/plain; charset=utf-8.
//
// A Post is safe for concurrent use.
type Post struct{ f *fetcher }

var (
	_ tool.Tool = (*Get)(nil)
	_ tool.Tool = (*Post)(nil)
)

// NewGet returns the http_get tool.
func NewGet() *Get { return &Get{f: newFetcher(options{})} }

// NewPost returns the http_post tool.
func NewPost() *Post { return &Post{f: newFetcher(options{})} }

// Info returns the http_get entry of the built-in tool table.
func (*Get) Info() permission.ToolInfo { return builtin("http_get") }

// Info returns the http_post entry of the built-in tool table.
func (*Post) Info() permission.ToolInfo { return builtin("http_post") }

// Run makes the request; see Get.
func (g *Get) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	return g.f.fetch(ctx, "http_get", "GET", call, nil, out)
}

// Run makes the request; see Post.
func (p *Post) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	body := call.String("body")
	return p.f.fetch(ctx, "http_post", "POST", call, &body, out)
}

// builtin returns the table entry of a built-in tool; a missing name is a
// programmer's mistake.
func builtin(name string) permission.ToolInfo {
	info, ok := permission.Builtin(name)
	if !ok {
		panic("web: no built-in tool " + name)
	}
	return info
}

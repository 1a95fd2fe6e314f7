// Package web holds the built-in tools that reach the network: http_get
// and http_post.
//
// The tools never follow a redirect: a 3xx goes back to the model with its
// Location, and following it is a new call that the PermissionEngine
// judges again (the engine judges each URL; a redirect must not carry a
// request past it). As defence in depth against DNS rebinding, the dialer
// refuses cloud metadata and link-local addresses whatever name resolved
// to them. Proxies from the environment are not used: the guard must see
// the address actually connected to.
//
// A request goes to the URL's normal form (netrisk.NormalizeURL: dot
// segments and %2e resolved, unreserved escapes decoded, host lower-case
// and IDNA, default port dropped), the form the PermissionEngine judged and
// matched rules against, so that what is judged is what is sent. A URL
// without a single normal form (..;/, ..%5c, %252e%252e) is refused before
// anything is sent.
package web

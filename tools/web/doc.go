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
package web

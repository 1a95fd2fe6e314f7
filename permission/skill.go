package permission

// ToolListed reports whether a skill's allowed tools name the tool, by name
// or glob, exactly as Check's skill step reads Request.AllowedTools. The
// session uses it to narrow one list by another (a skill used while
// another is active).
func ToolListed(list []string, name string) bool { return toolListed(list, name) }

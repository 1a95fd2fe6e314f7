package shellrisk

// ruleForLang returns the rule for a program of this file's class, or nil:
// code handed to interpreters and tools with a language of their own (python, perl, ruby, node, php, lua, deno, bun, pwsh one-liners; ed, ex, vim, emacs batch commands).
// ruleFor consults it before its own table, so a rule returned here
// replaces the general one for that program.
func ruleForLang(name string) rule {
	switch name {
	}
	return nil
}

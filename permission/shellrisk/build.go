package shellrisk

// ruleForBuild returns the rule for a program of this file's class, or nil:
// build tools whose options run code (mvn exec, cmake -E, gradle, cargo, bazel).
// ruleFor consults it before its own table, so a rule returned here
// replaces the general one for that program.
func ruleForBuild(name string) rule {
	switch name {
	}
	return nil
}

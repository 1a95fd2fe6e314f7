package shellrisk

// ruleForDestroy returns the rule for a program of this file's class, or nil:
// destruction without rm (ORM and migration resets, database drops, infrastructure teardown, volumes) and secrets printed by tools.
// ruleFor consults it before its own table, so a rule returned here
// replaces the general one for that program.
func ruleForDestroy(name string) rule {
	switch name {
	}
	return nil
}

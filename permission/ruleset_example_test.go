package permission_test

import (
	"fmt"
	"slices"

	"github.com/custom-agent/custom-agent/permission"
)

// A level's rules are compiled once into a RuleSet (a policy file when it
// is read); Join puts the levels together without compiling them again.
func ExampleJoin() {
	user, err := permission.CompileSet(1, slices.Values([]permission.Rule{
		{ID: "npm", Level: permission.LevelUser, Tool: "shell", Command: "npm", Decision: permission.Allow},
	}))
	if err != nil {
		panic(err)
	}
	project, err := permission.CompileSet(1, slices.Values([]permission.Rule{
		{ID: "no-publish", Level: permission.LevelProject, Tool: "shell", Command: "npm publish", Decision: permission.Deny},
	}))
	if err != nil {
		panic(err)
	}
	pol := permission.Join(user, project)
	tool, _ := permission.Builtin("shell")
	for _, cmd := range []string{"npm ci", "npm publish"} {
		d := permission.Engine{}.Check(permission.Request{Tool: tool, Args: map[string]any{"command": cmd}, Cwd: "/home/u/proj", Home: "/home/u", Policy: pol})
		fmt.Printf("%s: %s by %s\n", cmd, d.Decision, d.Rule.ID)
	}
	fmt.Println(pol.Len(), "rules")
	// Output:
	// npm ci: allow by npm
	// npm publish: deny by no-publish
	// 2 rules
}

// A rule that does not compile is reported by its position in the
// sequence, as Compile reports it.
func ExampleCompileSet_error() {
	_, err := permission.CompileSet(2, slices.Values([]permission.Rule{
		{ID: "ok", Level: permission.LevelUser, Tool: "read_file", Decision: permission.Allow},
		{ID: "bad", Level: permission.LevelUser, Tool: "read_file", Path: "src/[", Decision: permission.Allow},
	}))
	fmt.Println(err)
	// Output:
	// rule "bad": path: "src/[" is not a valid glob
}

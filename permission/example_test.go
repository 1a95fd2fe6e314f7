package permission_test

import (
	"fmt"

	"github.com/custom-agent/custom-agent/permission"
)

func ExampleEngine_Check() {
	tool, _ := permission.Builtin("read_file")
	d := permission.Engine{}.Check(permission.Request{
		Tool: tool,
		Args: map[string]any{"path": "~/.ssh/id_rsa"},
		Cwd:  "/home/u/proj",
		Home: "/home/u",
	})
	fmt.Println(d.Decision, d.RiskAtDecision, d.SourcedFrom)
	fmt.Println(d.Reason)
	// Output:
	// deny credential default
	// read_file: `~/.ssh/id_rsa` is in ~/.ssh, where SSH keys live; credential calls are denied unless a policy rule that names them allows them.
}

func ExampleEngine_Check_symlink() {
	tool, _ := permission.Builtin("read_file")
	d := permission.Engine{}.Check(permission.Request{
		Tool: tool,
		Args: map[string]any{"path": "docs/key"},
		Cwd:  "/home/u/proj",
		Home: "/home/u",
		// The caller resolved the link; the engine never touches the disk.
		Resolved: map[string]string{"/home/u/proj/docs/key": "/home/u/.ssh/id_ed25519"},
	})
	fmt.Println(d.Decision, d.RiskAtDecision)
	fmt.Println(d.Reason)
	// Output:
	// deny credential
	// read_file: `docs/key` resolves through a symbolic link or a hard link to `/home/u/.ssh/id_ed25519`, which is in ~/.ssh, where SSH keys live; credential calls are denied unless a policy rule that names them allows them.
}

func ExampleEngine_Check_rule() {
	policy, err := permission.Compile([]permission.Rule{{
		ID: "tests", Level: permission.LevelProject, Source: ".custom-agent/policy.json",
		Tool: "shell", Command: "npm test", Decision: permission.Allow,
	}})
	if err != nil {
		panic(err)
	}
	tool, _ := permission.Builtin("shell")
	for _, cmd := range []string{"npm test -- --watch", "npm test && npm publish"} {
		d := permission.Engine{}.Check(permission.Request{
			Tool:   tool,
			Args:   map[string]any{"command": cmd},
			Cwd:    "/home/u/proj",
			Home:   "/home/u",
			Policy: policy,
		})
		fmt.Printf("%s: %s from %s\n", cmd, d.Decision, d.SourcedFrom)
	}
	// Output:
	// npm test -- --watch: allow from override
	// npm test && npm publish: ask from default
}

func ExampleEngine_Check_default() {
	tool, _ := permission.Builtin("write_file")
	d := permission.Engine{}.Check(permission.Request{
		Tool: tool,
		Args: map[string]any{"path": ".vscode/tasks.json", "content": "{}"},
		Cwd:  "/home/u/proj",
		Home: "/home/u",
	})
	fmt.Println(d.Decision, d.RiskAtDecision)
	fmt.Println(d.Reason)
	// Output:
	// ask execute
	// write_file: `.vscode/tasks.json` is an editor configuration (.vscode), whose tasks and settings run code; execute calls are asked by default.
}

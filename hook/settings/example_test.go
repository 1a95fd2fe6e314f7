package settings_test

import (
	"fmt"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/settings"
)

func ExampleInstall() {
	before := []byte(`{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`)
	after, _ := settings.Install(before, hook.ClaudeCode, "custom-agent-gate hook claude-code")
	back, n, _ := settings.Uninstall(after, hook.ClaudeCode)
	fmt.Print(string(back))
	fmt.Println(n, "removed")
	// Output:
	// {
	//   "model": "opus",
	//   "hooks": {
	//     "Stop": [
	//       {
	//         "hooks": [
	//           {
	//             "type": "command",
	//             "command": "say done"
	//           }
	//         ]
	//       }
	//     ]
	//   }
	// }
	// 2 removed
}

package anthropic_test

import (
	"fmt"

	"github.com/custom-agent/custom-agent/model/anthropic"
)

func ExampleFromEnv() {
	_, err := anthropic.New(anthropic.FromEnv("claude-sonnet-4-5", func(string) string { return "" }))
	fmt.Println(err)

	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-example"}
	p, err := anthropic.New(anthropic.FromEnv("claude-sonnet-4-5", func(k string) string { return env[k] }))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name())
	// Output:
	// model provider not configured: anthropic: no API key: set ANTHROPIC_API_KEY
	// anthropic:claude-sonnet-4-5
}

package openai_test

import (
	"errors"
	"fmt"

	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/model/openai"
)

func ExampleFromEnv() {
	// Ollama: a base URL and no key.
	env := map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}
	p, err := openai.New(openai.FromEnv("qwen3:8b", func(k string) string { return env[k] }))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name())

	// Neither a key nor a base URL: the error says what to set.
	_, err = openai.New(openai.FromEnv("gpt-4.1", func(string) string { return "" }))
	fmt.Println(errors.Is(err, model.ErrNotConfigured))
	// Output:
	// openai:qwen3:8b
	// true
}

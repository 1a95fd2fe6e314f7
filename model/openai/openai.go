// Package openai is the model.Gateway for OpenAI-compatible Chat Completions
// servers: OpenAI itself, and local or self-hosted servers that speak the
// same API (Ollama, vLLM, llama.cpp server).
//
// It streams with the official SDK, yields text deltas as they arrive, and
// yields each tool call only once the response has finished, when its
// streamed arguments are whole and checked to be a JSON object.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/custom-agent/custom-agent/model"
)

// DefaultMaxRetries is how often a failed request is retried when
// Options.MaxRetries is zero. The SDK retries connection errors and 408,
// 409, 429 and 5xx answers with backoff, and only before any of the stream
// has been read.
const DefaultMaxRetries = 2

// Options configure a Provider. Resolving them from flags, environment and
// config is the caller's job; FromEnv covers the environment.
type Options struct {
	// Model is the model name the server knows, e.g. "gpt-4.1" or
	// "qwen3:8b". Required.
	Model string
	// BaseURL is the API root including /v1, e.g.
	// "http://localhost:11434/v1" for Ollama. Empty means OpenAI's
	// https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token. It may be empty only when BaseURL
	// is set, since local servers usually need no key.
	APIKey string
	// HTTPClient sends the requests; nil means the SDK's default client.
	HTTPClient *http.Client
	// MaxTokens caps each response; 0 leaves it to the server. A
	// Request's own MaxTokens takes precedence.
	MaxTokens int
	// MaxRetries is how often a failed request is retried: 0 means
	// DefaultMaxRetries, a negative value means never.
	MaxRetries int
	// Timeout is how long a call waits for the server's first byte, and
	// then between two pieces of the answer (model.Watch): 0 means
	// model.DefaultTimeout, a negative value means forever.
	Timeout time.Duration
}

// FromEnv returns Options for model with the base URL and key taken from
// OPENAI_BASE_URL and OPENAI_API_KEY, read through getenv (os.Getenv in
// production). Flags and config that should win over the environment are
// the caller's to apply on the result.
func FromEnv(modelName string, getenv func(string) string) Options {
	return Options{
		Model:   modelName,
		BaseURL: strings.TrimSpace(getenv("OPENAI_BASE_URL")),
		APIKey:  strings.TrimSpace(getenv("OPENAI_API_KEY")),
		Timeout: model.TimeoutOrDefault(getenv),
	}
}

// Provider streams Chat Completions. It is safe for concurrent use.
type Provider struct {
	opts    Options
	baseURL string
	client  openai.Client
	// maxCompletionTokens: OpenAI itself wants max_completion_tokens
	// (reasoning models reject max_tokens), while compatible servers
	// have long understood only max_tokens.
	maxCompletionTokens bool
}

var _ model.Gateway = (*Provider)(nil)

// New checks opts and returns a Provider. A missing model, or neither a key
// nor a base URL, is an error wrapping model.ErrNotConfigured that says what
// to set.
func New(opts Options) (*Provider, error) {
	if opts.Model == "" {
		return nil, fmt.Errorf("%w: openai: no model name: pass --model openai:NAME (e.g. openai:gpt-4.1, or the name your local server serves)", model.ErrNotConfigured)
	}
	official := true
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: openai: base URL %q is not an http(s) URL: set OPENAI_BASE_URL like http://localhost:11434/v1", model.ErrNotConfigured, opts.BaseURL)
		}
		official = u.Hostname() == "api.openai.com"
	}
	if opts.APIKey == "" && opts.BaseURL == "" {
		return nil, fmt.Errorf("%w: openai: no API key: set OPENAI_API_KEY for api.openai.com, or OPENAI_BASE_URL for a server that needs no key (Ollama: http://localhost:11434/v1)", model.ErrNotConfigured)
	}

	retries := opts.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	baseURL := opts.BaseURL
	if baseURL == "" {
		baseURL = "https://api.openai.com/v1"
	}
	ropts := []option.RequestOption{
		option.WithBaseURL(baseURL),
		// Always set, even when empty, so an OPENAI_API_KEY in the
		// environment is never sent to a server the caller did not mean.
		option.WithAPIKey(opts.APIKey),
		option.WithMaxRetries(retries),
	}
	ropts = append(ropts, option.WithHTTPClient(model.WatchedClient(opts.HTTPClient)))
	if opts.Timeout == 0 {
		opts.Timeout = model.DefaultTimeout
	}
	return &Provider{
		opts:                opts,
		baseURL:             baseURL,
		client:              openai.NewClient(ropts...),
		maxCompletionTokens: official,
	}, nil
}

// Name is "openai:MODEL".
func (p *Provider) Name() string { return "openai:" + p.opts.Model }

// Stream sends req and streams the answer. See model.Gateway for the
// contract; the stop reasons are model's vocabulary: "end_turn",
// "tool_use", "max_tokens", or the server's finish_reason as it came.
func (p *Provider) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		params, err := p.params(req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		outer := ctx
		ctx, timedOut, stop := model.Watch(ctx, p.opts.Timeout, p.baseURL)
		defer stop()
		stream := p.client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()

		var st streamState
		for stream.Next() {
			out, err := st.feed(stream.Current())
			for _, c := range out {
				if !yield(c, nil) {
					return
				}
			}
			if err != nil {
				yield(model.Chunk{}, err)
				return
			}
		}
		if err := timedOut(); err != nil && outer.Err() == nil {
			yield(model.Chunk{}, fmt.Errorf("openai: %w", err))
			return
		}
		if err := stream.Err(); err != nil {
			yield(model.Chunk{}, streamError(ctx, p.baseURL, err))
			return
		}
		if ctx.Err() != nil {
			yield(model.Chunk{}, ctx.Err())
			return
		}
		done, err := st.end()
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		yield(done, nil)
	}
}

// streamError turns what the SDK reports into an error a person can act on.
func streamError(ctx context.Context, baseURL string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if r := model.Refused(baseURL, err); r != nil {
		return fmt.Errorf("openai: %w", r)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return apiError(apiErr, model.RetriedNote(ctx))
	}
	var sErr *ssestream.StreamError
	if errors.As(err, &sErr) {
		return fmt.Errorf("openai: the server reported an error in the stream: %s", strings.TrimPrefix(sErr.Message, "received error while streaming: "))
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) {
		return fmt.Errorf("%w: openai: a stream chunk is not a valid chat.completion.chunk: %v", model.ErrMalformed, err)
	}
	return fmt.Errorf("openai: %w", err)
}

// apiError names the HTTP status, the server's message, and for the usual
// configuration mistakes what to check.
func apiError(e *openai.Error, retried string) error {
	msg := fmt.Sprintf("openai: the server answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (check OPENAI_API_KEY)"
	case http.StatusNotFound:
		msg += " (check the model name and OPENAI_BASE_URL, which should end in /v1)"
	}
	return &statusError{msg: msg + retried, err: e}
}

// statusError keeps the SDK's *openai.Error reachable through errors.As
// while saying more than its terse Error string.
type statusError struct {
	msg string
	err *openai.Error
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.err }

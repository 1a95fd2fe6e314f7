// Package anthropic is the model.Gateway for Anthropic's Messages API.
//
// It streams with the official SDK, yields text deltas as they arrive, and
// yields each tool_use block when its content_block_stop arrives, with the
// streamed input JSON whole and checked to be an object.
package anthropic

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

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/custom-agent/custom-agent/model"
)

const (
	// DefaultMaxTokens caps a response when neither Options nor the
	// Request say; the Messages API requires a cap.
	DefaultMaxTokens = 4096
	// DefaultMaxRetries is how often a failed request is retried when
	// Options.MaxRetries is zero. The SDK retries connection errors and
	// 408, 409, 429 and 5xx answers with backoff, and only before any of
	// the stream has been read.
	DefaultMaxRetries = 2
)

// Options configure a Provider. Resolving them from flags, environment and
// config is the caller's job; FromEnv covers the environment.
type Options struct {
	// Model is the model name, e.g. "claude-sonnet-4-5". Required.
	Model string
	// BaseURL is the API root without /v1; empty means
	// https://api.anthropic.com.
	BaseURL string
	// APIKey is sent as x-api-key. Required.
	APIKey string
	// HTTPClient sends the requests; nil means the SDK's default client.
	HTTPClient *http.Client
	// MaxTokens caps each response: 0 means DefaultMaxTokens. A Request's
	// own MaxTokens takes precedence.
	MaxTokens int
	// MaxRetries is how often a failed request is retried: 0 means
	// DefaultMaxRetries, a negative value means never.
	MaxRetries int
	// Timeout is how long a call waits for the server's first byte, and
	// then between two pieces of the answer (model.Watch): 0 means
	// model.DefaultTimeout, a negative value means forever.
	Timeout time.Duration
}

// FromEnv returns Options for model with the key from ANTHROPIC_API_KEY and
// the base URL from ANTHROPIC_BASE_URL (usually unset), read through getenv
// (os.Getenv in production). Flags and config that should win over the
// environment are the caller's to apply on the result.
func FromEnv(modelName string, getenv func(string) string) Options {
	return Options{
		Model:   modelName,
		BaseURL: strings.TrimSpace(getenv("ANTHROPIC_BASE_URL")),
		APIKey:  strings.TrimSpace(getenv("ANTHROPIC_API_KEY")),
		Timeout: model.TimeoutOrDefault(getenv),
	}
}

// Provider streams Messages. It is safe for concurrent use.
type Provider struct {
	opts    Options
	baseURL string
	client  anthropic.Client
}

var _ model.Gateway = (*Provider)(nil)

// New checks opts and returns a Provider. A missing model or key is an
// error wrapping model.ErrNotConfigured that says what to set.
func New(opts Options) (*Provider, error) {
	if opts.Model == "" {
		return nil, fmt.Errorf("%w: anthropic: no model name: pass --model anthropic:NAME (e.g. anthropic:claude-sonnet-4-5)", model.ErrNotConfigured)
	}
	if opts.APIKey == "" {
		return nil, fmt.Errorf("%w: anthropic: no API key: set ANTHROPIC_API_KEY", model.ErrNotConfigured)
	}
	retries := opts.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	ropts := []option.RequestOption{
		// The caller resolved the configuration; the SDK must not add
		// credentials or a base URL of its own from the environment.
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(opts.APIKey),
		option.WithMaxRetries(retries),
	}
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: anthropic: base URL %q is not an http(s) URL: fix or unset ANTHROPIC_BASE_URL", model.ErrNotConfigured, opts.BaseURL)
		}
		ropts = append(ropts, option.WithBaseURL(opts.BaseURL))
	}
	ropts = append(ropts, option.WithHTTPClient(model.WatchedClient(opts.HTTPClient)))
	if opts.Timeout == 0 {
		opts.Timeout = model.DefaultTimeout
	}
	baseURL := opts.BaseURL
	if baseURL == "" {
		baseURL = "https://api.anthropic.com"
	}
	return &Provider{opts: opts, baseURL: baseURL, client: anthropic.NewClient(ropts...)}, nil
}

// Name is "anthropic:MODEL".
func (p *Provider) Name() string { return "anthropic:" + p.opts.Model }

// Stream sends req and streams the answer. See model.Gateway for the
// contract; the stop reason is the API's stop_reason ("end_turn",
// "tool_use", "max_tokens", …).
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
		stream := p.client.Messages.NewStreaming(ctx, params)
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
			if st.stopped {
				return
			}
		}
		if err := timedOut(); err != nil && outer.Err() == nil {
			yield(model.Chunk{}, fmt.Errorf("anthropic: %w", err))
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
		yield(model.Chunk{}, fmt.Errorf("%w: anthropic: stream ended before message_stop", model.ErrMalformed))
	}
}

// streamError turns what the SDK reports into an error a person can act on.
func streamError(ctx context.Context, baseURL string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if r := model.Refused(baseURL, err); r != nil {
		return fmt.Errorf("anthropic: %w", r)
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		return apiError(apiErr, model.RetriedNote(ctx))
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) {
		return fmt.Errorf("%w: anthropic: a stream event is not valid JSON: %v", model.ErrMalformed, err)
	}
	if strings.HasPrefix(err.Error(), "received error while streaming") {
		return fmt.Errorf("anthropic: the API reported an error in the stream: %s", strings.TrimPrefix(err.Error(), "received error while streaming: "))
	}
	return fmt.Errorf("anthropic: %w", err)
}

// apiError names the HTTP status or the in-stream error type, the API's
// message, and for the usual configuration mistakes what to check.
func apiError(e *anthropic.Error, retried string) error {
	var msg string
	if e.StatusCode >= 400 {
		msg = fmt.Sprintf("anthropic: the API answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	} else {
		// An error event after a 200: the stream had started.
		msg = "anthropic: the API reported an error in the stream"
	}
	if t := e.Type(); t != "" {
		msg += ": " + string(t)
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (check ANTHROPIC_API_KEY)"
	case http.StatusNotFound:
		msg += " (check the model name)"
	}
	if e.RequestID != "" {
		msg += " (request-id " + e.RequestID + ")"
	}
	return &statusError{msg: msg + retried, err: e}
}

// statusError keeps the SDK's *anthropic.Error reachable through errors.As
// while saying more than its Error string, which dumps the whole body.
type statusError struct {
	msg string
	err *anthropic.Error
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.err }

package output

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/tool"
)

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// fakeOutputs holds one recorded output: tc_1's stdout.
type fakeOutputs struct {
	data  string
	total int64
	refs  []tool.OutputRef
}

func (f *fakeOutputs) OpenOutput(_ context.Context, ref tool.OutputRef) (*tool.RecordedOutput, error) {
	f.refs = append(f.refs, ref)
	if ref.ToolCallID != "tc_1" && ref.Digest != "sha256:aa" {
		return nil, errors.New("no such output")
	}
	return &tool.RecordedOutput{OutputRef: tool.OutputRef{ToolCallID: "tc_1", Stream: "stdout", Digest: "sha256:aa"},
		Stored: int64(len(f.data)), Total: f.total, Content: nopCloser{bytes.NewReader([]byte(f.data))}}, nil
}

func run(t *testing.T, o tool.Outputs, args string) (string, json.RawMessage, error) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	res, err := New().Run(context.Background(), tool.Call{ID: "tc_2", Args: m, Outputs: o}, tool.Output{Stdout: &out, Stderr: &errOut})
	return out.String(), res.Summary, err
}

func TestReadOutput(t *testing.T) {
	t.Parallel()
	if info := New().Info(); info.Risk != risk.Read || !info.AllowsMode("plan") {
		t.Fatalf("read_output is %v, want a read allowed in plan mode", info.Risk)
	}
	data := strings.Repeat("0123456789", 2000) // 20000 bytes
	o := &fakeOutputs{data: data, total: 25000}
	for _, tc := range []struct {
		args, want, err string
	}{
		{args: `{"toolCallId":"tc_1","offset":5,"limit":7}`, want: data[5:12]},
		{args: `{"digest":"sha256:aa","offset":19995}`, want: data[19995:]},
		{args: `{"toolCallId":"tc_1"}`, want: data[:DefaultLimit]},
		{args: `{"toolCallId":"tc_1","limit":1000000}`, want: data[:MaxLimit]},
		{args: `{"toolCallId":"tc_1","offset":20000}`, err: "past the end: 20000 bytes of stdout of tc_1 are stored (it printed 25000"},
		{args: `{}`, err: "give either toolCallId"},
		{args: `{"toolCallId":"tc_1","digest":"sha256:aa"}`, err: "give either toolCallId"},
		{args: `{"digest":"sha256:aa","stream":"stderr"}`, err: "stream goes with toolCallId"},
		{args: `{"toolCallId":"tc_7"}`, err: "no such output"},
	} {
		got, sum, err := run(t, o, tc.args)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.args, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("%s: read %d bytes, want %d", tc.args, len(got), len(tc.want))
		case tc.err == "" && !strings.Contains(string(sum), `"total":25000`):
			t.Errorf("%s: summary %s", tc.args, sum)
		}
	}
	if _, _, err := run(t, nil, `{"toolCallId":"tc_1"}`); err == nil {
		t.Error("read_output without Outputs ran")
	}
}

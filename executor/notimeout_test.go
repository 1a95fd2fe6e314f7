package executor

import (
	"testing"
	"time"
)

func TestTimeoutMsAnnouncesNoTimeoutAsZero(t *testing.T) {
	for d, want := range map[time.Duration]int64{30 * time.Second: 30000, time.Millisecond: 1, NoApprovalTimeout: 0} {
		if got := timeoutMs(d); got != want {
			t.Errorf("timeoutMs(%v) = %d, want %d", d, got, want)
		}
	}
}

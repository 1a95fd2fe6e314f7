package settings

import (
	"strings"
)

// Diff shows what changes from before to after, line by line: "-" lines
// go, "+" lines come, and up to two unchanged lines around each change
// are shown for context ("…" stands for the lines between).
func Diff(before, after []byte) string {
	a, b := lines(before), lines(after)
	// Longest common subsequence, by dynamic programming: settings files
	// are small.
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte
		text string
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	const context = 2
	show := make([]bool, len(ops))
	for k, o := range ops {
		if o.kind != ' ' {
			for d := max(0, k-context); d <= min(len(ops)-1, k+context); d++ {
				show[d] = true
			}
		}
	}
	var out strings.Builder
	skipped := false
	for k, o := range ops {
		if !show[k] {
			skipped = true
			continue
		}
		if skipped && out.Len() > 0 {
			out.WriteString("  …\n")
		}
		skipped = false
		out.WriteByte(o.kind)
		out.WriteByte(' ')
		out.WriteString(o.text)
		out.WriteByte('\n')
	}
	return out.String()
}

func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

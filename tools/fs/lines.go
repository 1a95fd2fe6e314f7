package fs

import (
	"bufio"
	"bytes"
	"context"
	"io"
)

// readLine reads the next line from r without its newline, keeping at most
// max bytes of it in buf (reused); n is the line's whole length. It returns
// io.EOF only when no line is left: a last line without a newline is a line.
// Memory stays bounded by max and r's buffer however long the line is.
func readLine(r *bufio.Reader, buf []byte, max int) (line []byte, n int, err error) {
	line = buf[:0]
	started := false
	for {
		chunk, err := r.ReadSlice('\n')
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		started = started || len(chunk) > 0
		n += len(body)
		if room := max - len(line); room > 0 {
			line = append(line, body[:min(room, len(body))]...)
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return line, n, nil
		case io.EOF:
			if !started {
				return nil, 0, io.EOF
			}
			return line, n, nil
		default:
			return nil, 0, err
		}
	}
}

// countLines counts the lines left in r: its newlines, plus one for a last
// line without a newline. It checks ctx between reads.
func countLines(ctx context.Context, r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	lines, last := 0, byte('\n')
	for {
		if err := cancelled(ctx); err != nil {
			return 0, err
		}
		n, err := r.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], []byte{'\n'})
			last = buf[n-1]
		}
		if err == io.EOF {
			if last != '\n' {
				lines++
			}
			return lines, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

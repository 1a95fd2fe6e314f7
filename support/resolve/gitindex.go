package resolve

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The git index, as far as the gate needs it: the path of every entry.
// It is read here, streaming, rather than with go-git's decoder, which
// keeps every name and, in a version 4 index whose names each repeat the
// last and grow by a byte, holds memory quadratic in the file's size (a
// 4 MB index crafted so ran the gate out of memory). Only the names are
// kept, one at a time, each at most maxIndexName bytes.

// maxIndexName bounds one entry's path (git's own PATH_MAX).
const maxIndexName = 4096

// errIndexIncomplete: the index does not list every tracked path (a split
// index, whose entries live in another file; a sparse index, whose
// directories stand for the files beneath them).
var errIndexIncomplete = errors.New("git index: does not list every tracked path")

// readIndexNames calls name with the path and mode of each entry of the
// index r (size bytes long), in order, until name returns false. hashLen is the
// object id's length: 20 bytes (SHA-1) or 32 (SHA-256). Any error means
// the index was not read whole.
func readIndexNames(r io.Reader, size int64, hashLen int, name func(name string, mode uint32) bool) error {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	consumed := func() int64 { return cr.n - int64(br.Buffered()) }
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return fmt.Errorf("git index header: %w", err)
	}
	if string(hdr[:4]) != "DIRC" {
		return errors.New("git index: no DIRC signature")
	}
	version := binary.BigEndian.Uint32(hdr[4:8])
	if version < 2 || version > 4 {
		return fmt.Errorf("git index: version %d", version)
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	fixed := 40 + hashLen + 2 // stat data, object id, flags
	entry := make([]byte, fixed+2)
	prev := make([]byte, 0, 256)
	// Where each entry starts, for the offset table git may load the
	// entries from instead (IEOT), and where the entries end, which the
	// EOIE extension says.
	starts := make([]int64, 0, min(int64(count), size/64+1))
	for n := uint32(0); n < count; n++ {
		starts = append(starts, consumed())
		if _, err := io.ReadFull(br, entry[:fixed]); err != nil {
			return fmt.Errorf("git index entry %d: %w", n, err)
		}
		mode := binary.BigEndian.Uint32(entry[24:28])
		switch mode {
		case 0o040000:
			return errIndexIncomplete // a sparse directory entry
		case 0o100644, 0o100755, 0o120000, 0o160000:
		default:
			// git masks the type bits of what it reads; it writes only
			// these modes.
			return fmt.Errorf("git index entry %d: mode %o, which git does not write", n, mode)
		}
		flags := binary.BigEndian.Uint16(entry[fixed-2 : fixed])
		size := fixed
		if flags&0x4000 != 0 { // extended flags follow
			if version < 3 {
				return errors.New("git index: extended flags in a version 2 index")
			}
			if _, err := io.ReadFull(br, entry[fixed:fixed+2]); err != nil {
				return fmt.Errorf("git index entry %d: %w", n, err)
			}
			size += 2
		}
		if version == 4 {
			strip, err := readIndexVarint(br)
			if err != nil {
				return fmt.Errorf("git index entry %d: %w", n, err)
			}
			if strip > uint64(len(prev)) {
				return fmt.Errorf("git index entry %d: strips %d bytes of a %d-byte name", n, strip, len(prev))
			}
			prev = prev[:len(prev)-int(strip)]
		} else {
			prev = prev[:0]
		}
		suffix, err := readIndexString(br, maxIndexName-len(prev))
		if err != nil {
			return fmt.Errorf("git index entry %d: %w", n, err)
		}
		prev = append(prev, suffix...)
		if !validIndexPath(prev) {
			return fmt.Errorf("git index entry %d: %q is not a path git would write", n, prev)
		}
		// git takes the name's length from the flags (when it is below
		// 0xFFF) and the next entry's offset from that length, and never
		// looks at what lies between: a name whose NUL comes elsewhere
		// would make this reader and git see different entries.
		if l := int(flags & 0xFFF); l < 0xFFF && l != len(prev) || l == 0xFFF && len(prev) < 0xFFF {
			return fmt.Errorf("git index entry %d: its flags say a %d-byte name, not %d", n, l, len(prev))
		}
		if version < 4 {
			// NUL padding to a multiple of 8 bytes, the terminating NUL
			// included (read above); git writes NULs, and so must it be.
			size += len(suffix) + 1
			if pad := (8 - size%8) % 8; pad > 0 {
				p, err := br.Peek(pad)
				if err != nil {
					return fmt.Errorf("git index entry %d: %w", n, err)
				}
				if bytes.Count(p, []byte{0}) != pad {
					return fmt.Errorf("git index entry %d: padding that is not NUL", n)
				}
				_, _ = br.Discard(pad)
			}
		}
		if !name(string(prev), mode) {
			return nil
		}
	}
	// Extensions, up to the trailing checksum: a split index names another
	// file holding the entries; a sparse one has directory entries (seen
	// above) and says so. git may load the entries from the offsets an
	// IEOT table gives, and find the extensions where EOIE says: both must
	// agree with the entries read here, one after another.
	end := consumed()
	// git looks for EOIE only at its fixed place, just before the
	// checksum, whatever the extensions before it say: one that runs over
	// that place could hide an EOIE (and the tables it leads to) from a
	// reader that walks the extensions in order.
	eoieAt := size - int64(hashLen) - (8 + 4 + int64(hashLen))
	for size-consumed() > int64(hashLen) {
		sig, err := br.Peek(8)
		if err != nil {
			return fmt.Errorf("git index extension: %w", err)
		}
		switch string(sig[:4]) {
		case "link", "sdir":
			return errIndexIncomplete
		}
		if sig[0] < 'A' || sig[0] > 'Z' {
			return fmt.Errorf("git index: extension %q that git requires to be understood", sig[:4])
		}
		n := int64(binary.BigEndian.Uint32(sig[4:8]))
		if n > size-consumed()-8-int64(hashLen) {
			return fmt.Errorf("git index: extension %q longer than the file", sig[:4])
		}
		if start := consumed(); start < eoieAt && eoieAt < start+8+n {
			if _, err := br.Discard(int(eoieAt - start)); err != nil {
				return err
			}
			if p, err := br.Peek(4); err == nil && string(p) == "EOIE" {
				return fmt.Errorf("git index: an EOIE where git looks for one, inside the %q extension", sig[:4])
			}
			if _, err := br.Discard(int(start + 8 + n - eoieAt)); err != nil {
				return err
			}
			continue
		}
		switch string(sig[:4]) {
		case "IEOT", "EOIE":
			if version == 4 && string(sig[:4]) == "IEOT" {
				// git starts each block's names afresh, this reader from
				// the name before: they would not agree.
				return errors.New("git index: a version 4 index with an offset table")
			}
			if n > 1<<20 {
				return fmt.Errorf("git index: a %d-byte %q extension", n, sig[:4])
			}
			body := make([]byte, 8+n)
			if _, err := io.ReadFull(br, body); err != nil {
				return fmt.Errorf("git index extension: %w", err)
			}
			if err := checkOffsets(string(sig[:4]), body[8:], starts, end); err != nil {
				return err
			}
			continue
		}
		if _, err := br.Discard(8 + int(n)); err != nil {
			return err
		}
	}
	return nil
}

// checkOffsets holds an IEOT table (blocks of entries, each an offset and
// a count) or an EOIE offset to the entries read one after another: their
// starts, and end, where they ended.
func checkOffsets(sig string, body []byte, starts []int64, end int64) error {
	bad := fmt.Errorf("git index: its %s extension says other offsets than its entries have", sig)
	if sig == "EOIE" {
		if len(body) < 4 || int64(binary.BigEndian.Uint32(body[:4])) != end {
			return bad
		}
		return nil
	}
	if len(body) < 4 || (len(body)-4)%8 != 0 {
		return bad
	}
	i := 0
	for b := body[4:]; len(b) > 0; b = b[8:] {
		off, n := int64(binary.BigEndian.Uint32(b[:4])), int(binary.BigEndian.Uint32(b[4:8]))
		if i >= len(starts) || starts[i] != off || n > len(starts)-i {
			return bad
		}
		i += n
	}
	if i != len(starts) {
		return bad
	}
	return nil
}

// validIndexPath reports whether name is a path git itself would put in an
// index (verify_path): relative, with no empty, "." or ".." component and
// no component that is .git in any case (or one NTFS or HFS would read as
// .git), and no backslash. git does not check the names of an index it
// reads, so an index written by hand may name ../../x or /etc/x, and git
// grep and git diff read that file: such an index is not read.
func validIndexPath(name []byte) bool {
	if len(name) == 0 || name[0] == '/' || name[len(name)-1] == '/' || bytes.IndexByte(name, '\\') >= 0 {
		return false
	}
	for _, c := range bytes.Split(name, []byte("/")) {
		switch string(c) {
		case "", ".", "..":
			return false
		}
		if l := bytes.ToLower(c); bytes.HasPrefix(l, []byte(".git")) && len(bytes.Trim(l[4:], ". ")) == 0 || bytes.HasPrefix(l, []byte("git~")) {
			return false
		}
	}
	return true
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readIndexString reads a NUL-terminated string of at most max bytes.
func readIndexString(br *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		c, err := br.ReadByte()
		if err != nil {
			return nil, err
		}
		if c == 0 {
			return out, nil
		}
		if len(out) >= max {
			return nil, fmt.Errorf("a name longer than %d bytes", maxIndexName)
		}
		out = append(out, c)
	}
}

// readIndexVarint reads git's offset encoding (as for OFS_DELTA), used by
// version 4 for how many bytes of the previous name to drop.
func readIndexVarint(br *bufio.Reader) (uint64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, err
	}
	v := uint64(c & 0x7f)
	for i := 0; c&0x80 != 0; i++ {
		if i > 8 {
			return 0, errors.New("a strip count that does not end")
		}
		if c, err = br.ReadByte(); err != nil {
			return 0, err
		}
		v = (v+1)<<7 | uint64(c&0x7f)
	}
	return v, nil
}

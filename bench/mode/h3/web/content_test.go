package web

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestContentBlocksDiffer(t *testing.T) {
	b, err := io.ReadAll(Content(4*blockSize + 100))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4*blockSize+100 {
		t.Fatalf("read %d bytes", len(b))
	}
	for i := 1; i < 4; i++ {
		if bytes.Equal(b[:blockSize], b[i*blockSize:(i+1)*blockSize]) {
			t.Errorf("block %d equals block 0", i)
		}
	}
	// Any offset and length gives the same bytes.
	p := make([]byte, blockSize+17)
	Fill(p, blockSize-5)
	if !bytes.Equal(p, b[blockSize-5:2*blockSize+12]) {
		t.Error("Fill at an offset differs from the stream")
	}
}

func TestCheckerFindsDamage(t *testing.T) {
	for _, size := range []int64{1000, MaxObject + 3*blockSize} {
		good, _ := io.ReadAll(Content(size))
		check := func(b []byte) error {
			c := NewChecker(size)
			if _, err := io.Copy(c, bytes.NewReader(b)); err != nil {
				return err
			}
			return c.Done()
		}
		if err := check(good); err != nil {
			t.Fatalf("%d bytes: the content itself: %v", size, err)
		}
		flipped := bytes.Clone(good)
		flipped[size-7] ^= 1
		if err := check(flipped); err == nil || !strings.Contains(err.Error(), "offset") {
			t.Errorf("%d bytes: a flipped byte: %v", size, err)
		}
		if err := check(good[:size-1]); err == nil || !strings.Contains(err.Error(), "ended after") {
			t.Errorf("%d bytes: a short body: %v", size, err)
		}
		if err := check(append(bytes.Clone(good), 0)); err == nil || !strings.Contains(err.Error(), "longer") {
			t.Errorf("%d bytes: a long body: %v", size, err)
		}
		if size > 2*blockSize {
			// Two whole blocks swapped: the same bytes, in the wrong places.
			swapped := bytes.Clone(good)
			copy(swapped[blockSize:2*blockSize], good[:blockSize])
			copy(swapped[:blockSize], good[blockSize:2*blockSize])
			if err := check(swapped); err == nil {
				t.Errorf("%d bytes: two blocks swapped passed", size)
			}
		}
	}
}

func TestPageLinks(t *testing.T) {
	for _, k := range []int{0, 1, 2, 3, 50} {
		links, err := pageLinks(bytes.NewReader(pageHTML(k, 123)))
		if err != nil {
			t.Fatal(err)
		}
		if len(links) != k {
			t.Fatalf("k=%d: %d links: %q", k, len(links), links)
		}
		seen := map[string]bool{}
		for _, l := range links {
			if !strings.HasPrefix(l, "/obj/123?r=") || seen[l] {
				t.Errorf("k=%d: link %q", k, l)
			}
			seen[l] = true
		}
	}
}

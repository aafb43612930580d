package web

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
)

// pageHTML is the page of k sub-resources of size bytes each: images,
// a stylesheet and a script, as a page has them.
func pageHTML(k int, size int64) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!doctype html>\n<html><head><title>%d resources of %d bytes</title>\n", k, size)
	for i := range k {
		switch {
		case i == 0:
			fmt.Fprintf(&b, "<link rel=\"stylesheet\" href=\"/obj/%d?r=%d\">\n", size, i)
		case i == 1:
			fmt.Fprintf(&b, "<script src=\"/obj/%d?r=%d\"></script>\n", size, i)
		case i == 2:
			b.WriteString("</head><body>\n")
			fallthrough
		default:
			fmt.Fprintf(&b, "<img src=\"/obj/%d?r=%d\" alt=\"%d\">\n", size, i, i)
		}
	}
	if k < 3 {
		b.WriteString("</head><body>\n")
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// pageLinks returns the sub-resources an HTML page names (link href,
// script src, img src), in order.
func pageLinks(r io.Reader) ([]string, error) {
	z := html.NewTokenizer(r)
	var links []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return links, fmt.Errorf("parsing the page: %w", err)
			}
			return links, nil
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			want := map[string]string{"link": "href", "script": "src", "img": "src"}[string(name)]
			for hasAttr && want != "" {
				var key, val []byte
				key, val, hasAttr = z.TagAttr()
				if string(key) == want && strings.HasPrefix(string(val), "/") {
					links = append(links, string(val))
				}
			}
		}
	}
}

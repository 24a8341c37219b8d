package content

import (
	"bytes"
	"io"
	"strings"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
func toLower(s string) string        { return strings.ToLower(s) }

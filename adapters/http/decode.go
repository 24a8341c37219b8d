package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/halocms/halocms/domain/fault"
)

// badJSON turns a decoding error into a 400 that says where it failed,
// keeping body-size errors as they are.
func badJSON(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fault.Invalidf("field %q must be a %s", te.Field, te.Type.String()).With("field", te.Field)
	}
	if errors.Is(err, io.EOF) {
		return fault.Invalidf("request body is empty")
	}
	return fault.Invalidf("malformed JSON: %v", err)
}

// decode reads a JSON body strictly: unknown fields are refused, and so is
// anything after the first value.
func decode(r *http.Request, v any) error { return decodeFrom(r.Body, v) }

func decodeFrom(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	dec.UseNumber() // numbers in untyped values (content values) keep their precision
	if err := dec.Decode(v); err != nil {
		return badJSON(err)
	}
	if dec.More() {
		return fault.Invalidf("malformed JSON: more than one value in the body")
	}
	return nil
}

// decodeOptional is decode for a body that may be left out: an empty body
// leaves v as it is; anything else must be valid.
func decodeOptional(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return badJSON(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return decode(r, v)
}

// formError keeps body-size errors (413) and reports the rest as 400.
func formError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return fault.Invalidf("malformed form body")
}

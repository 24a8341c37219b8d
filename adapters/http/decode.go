package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"

	"github.com/halocms/halocms/domain/fault"
)

// BadJSON turns a decoding error into a 400 that says where it failed,
// keeping body-size errors as they are.
func BadJSON(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fault.Invalidf("the body must be %s, not a JSON %s", jsonKindOf(te.Type), te.Value)
		}
		return fault.Invalidf("field %q must be %s, not a JSON %s", te.Field, jsonKindOf(te.Type), te.Value).With("field", te.Field)
	}
	if errors.Is(err, io.EOF) {
		return fault.Invalidf("request body is empty")
	}
	return fault.Invalidf("malformed JSON: %v", err)
}

// decode reads a JSON body strictly: unknown fields are refused, and so is
// anything after the first value.
func Decode(r *http.Request, v any) error { return DecodeFrom(r.Body, v) }

func DecodeFrom(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	dec.UseNumber() // numbers in untyped values (content values) keep their precision
	if err := dec.Decode(v); err != nil {
		return BadJSON(err)
	}
	if dec.More() {
		return fault.Invalidf("malformed JSON: more than one value in the body")
	}
	return nil
}

// DecodeOptional is decode for a body that may be left out: an empty body
// leaves v as it is; anything else must be valid.
func DecodeOptional(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return BadJSON(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return Decode(r, v)
}

// FormError keeps body-size errors (413) and reports the rest as 400.
func FormError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return fault.Invalidf("malformed form body")
}

// jsonKindOf names, in JSON terms, what a Go type decodes from.
func jsonKindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map, reflect.Struct:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + t.String()
}

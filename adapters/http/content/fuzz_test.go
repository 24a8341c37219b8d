package content

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/adapters/http/internal/fuzztest"
)

// FuzzContentBodies feeds arbitrary bytes to the content context's body
// decoders and what turns their bodies into commands and queries
// (module, field, instance, batch, search): nothing panics, and every
// refusal is a client error, never an internal one.
func FuzzContentBodies(f *testing.F) {
	for _, s := range []string{
		`{"name":"News","fields":[{"name":"title","type":"000000000000000000000001","isRequired":true}]}`,
		`{"module":"m1","name":"Road works","values":{"title":"x","price":1.5},"tags":[{"name":"a","value":"b"}],"publishedAt":1700000000000}`,
		`{"created":[{"module":"m1","name":"a"}],"deleted":[{"id":"i1"}],"truncate":[{"module":"m1"}]}`,
		`{"moduleName":"News","searchValues":{"condition":"and","operands":[{"operation":"in","property":"category","value":["local","world"],"type":"string"}]},` +
			`"metaSearch":{"operation":"<=","property":"publishedAt","value":1700000000000,"type":"date"},"segmentTags":[{"name":"Platform Name","value":"android"}],` +
			`"segmentMode":"partial","sort":"publishedAt desc,values.price asc","pagination":{"page":1,"limit":10,"skip":false}}`,
		`{"created":[null, 1, {"bad": true}]}`, `{"fields":[{"name":"","type":{}}]}`, `{}`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(what string, err error) { fuzztest.ClientError(t, what, err) }
		var m moduleBody
		if err := httpapi.DecodeFrom(bytes.NewReader(body), &m); err == nil {
			_, err = m.spec()
			check("moduleBody.spec", err)
		}
		var mt moduleTypeBody
		if err := httpapi.DecodeFrom(bytes.NewReader(body), &mt); err == nil {
			_, err = fieldsFromBody(mt.Fields)
			check("fieldsFromBody", err)
		}
		var ib instanceBody
		if err := httpapi.DecodeFrom(bytes.NewReader(body), &ib); err == nil {
			_, err = ib.input()
			check("instanceBody.input", err)
		}
		batch, err := decodeBatch(body)
		check("decodeBatch", err)
		for _, list := range [][]batchEntry{batch.Created, batch.Updated, batch.CreatedOrUpdated, batch.Deleted, batch.Truncate, batch.Truncated} {
			for _, e := range list {
				check("batch entry", e.err)
				if e.err == nil {
					_, err := e.body.input()
					check("batch entry input", err)
				}
			}
		}
		_, err = searchRequest(httptest.NewRequest(http.MethodPost, "/api/generalcontent/instance/search", bytes.NewReader(body)))
		check("searchRequest", err)
		var tb transitBody
		check("transitBody", httpapi.DecodeFrom(bytes.NewReader(body), &tb))
		var sb syncBody
		check("syncBody", httpapi.DecodeFrom(bytes.NewReader(body), &sb))
	})
}

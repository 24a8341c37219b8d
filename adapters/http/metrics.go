package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the Prometheus collectors of the server.
type Metrics struct {
	reg        *prometheus.Registry
	latency    *prometheus.HistogramVec
	commands   *prometheus.CounterVec
	appends    prometheus.Counter
	syncHeld   prometheus.Histogram
	searches   *prometheus.CounterVec
	lookups    *prometheus.CounterVec
	deprecated *prometheus.CounterVec
}

// NewMetrics registers the server's collectors (and the Go runtime's) in a
// registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cms_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern, method and status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method", "status"}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cms_commands_total",
			Help: "Commands handled, by command and outcome (ok or the failure kind).",
		}, []string{"command", "outcome"}),
		appends: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cms_events_appended_total",
			Help: "Events appended to the event store.",
		}),
		syncHeld: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "cms_sync_held_back_seconds",
			Help: "How far a content sync's syncTimestamp was set back by the content projection's horizon " +
				"(the read model behind the log, or a transaction or statement still running on the database).",
			Buckets: []float64{.01, .1, 1, 5, 30, 300, 3600},
		}),
	}
	m.searches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cms_content_searches_total",
		Help: "Content searches run (not answered from the answer cache), by where their page and total came from: " +
			"memory (the in-memory copy of the module, CMS_SEARCH_INDEX_ITEMS) or postgresql.",
	}, []string{"index"})
	m.lookups = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cms_search_cache_lookups_total",
		Help: "Content searches looked up in the answer cache, by result (hit, miss, stale or bypass).",
	}, []string{"result"})
	m.deprecated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cms_deprecated_calls_total",
		Help: "Calls of deprecated endpoints, by route pattern and by the app of the caller's token " +
			"(empty for CMS users and unknown apps): who still has to move.",
	}, []string{"route", "app"})
	m.reg.MustRegister(m.latency, m.commands, m.appends, m.syncHeld, m.searches, m.lookups, m.deprecated,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Register adds more collectors (projection lag, for example).
func (m *Metrics) Register(c ...prometheus.Collector) { m.reg.MustRegister(c...) }

// Appended counts appended events (hook for the event store).
func (m *Metrics) Appended(n int) { m.appends.Add(float64(n)) }

// SyncHeldBack records how far the horizon set a sync's answer back.
func (m *Metrics) SyncHeldBack(d time.Duration) { m.syncHeld.Observe(d.Seconds()) }

// Searched counts a content search run by index (memory or postgresql).
func (m *Metrics) Searched(index string) { m.searches.WithLabelValues(index).Inc() }

// CacheLookup counts a content search looked up in the answer cache.
func (m *Metrics) CacheLookup(result string) { m.lookups.WithLabelValues(result).Inc() }

// Command records the outcome of one command.
func (m *Metrics) Command(name string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = kindLabel(err)
	}
	m.commands.WithLabelValues(name, outcome).Inc()
}

// Handler serves the registry.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (s *server) metrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		method := r.Method
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
			http.MethodDelete, http.MethodOptions:
		default:
			method = "other" // bounded label values, whatever clients send
		}
		s.kit.Metrics.latency.WithLabelValues(route, method, strconv.Itoa(status)).Observe(time.Since(start).Seconds())
	})
}

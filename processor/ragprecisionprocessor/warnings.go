package ragprecisionprocessor

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ragprecision/ragprecision/internal/ragattr"
	"github.com/ragprecision/ragprecision/judge"
)

// warnInterval is the least time between two log lines about the same
// status and reason; the lines in between are counted.
const warnInterval = 30 * time.Second

// warnings logs why selected spans go on unscored, at most once per
// warnInterval for each status and reason, with the count since the last
// line, so that an operator learns of a problem from the log without the
// log drowning in it.
type warnings struct {
	logger *zap.Logger
	now    func() time.Time
	mu     sync.Mutex
	last   map[[2]string]*warnState
}

type warnState struct {
	at         time.Time
	suppressed int
}

func newWarnings(logger *zap.Logger, now func() time.Time) *warnings {
	return &warnings{logger: logger, now: now, last: map[[2]string]*warnState{}}
}

// unscored notes a span that goes on with status (and reason); err is the
// judge's failure, whose text is safe to log.
func (w *warnings) unscored(status, reason string, err error) {
	key := [2]string{status, reason}
	now := w.now()
	w.mu.Lock()
	s, ok := w.last[key]
	if ok && now.Sub(s.at) < warnInterval {
		s.suppressed++
		w.mu.Unlock()
		return
	}
	since := 0
	if ok {
		since = s.suppressed
	} else {
		s = &warnState{}
		w.last[key] = s
	}
	s.at, s.suppressed = now, 0
	w.mu.Unlock()

	fields := []zap.Field{zap.String("status", status)}
	if reason != "" {
		fields = append(fields, zap.String("reason", reason))
	}
	if since > 0 {
		fields = append(fields, zap.Int("more_since_last_message", since))
	}
	fields = append(fields, zap.String("advice", adviceFor(status, reason)))
	if err != nil && status == ragattr.StatusJudgeError {
		fields = append(fields, zap.Error(err))
	}
	msg := "selected span forwarded without a score"
	switch status {
	case ragattr.StatusNoChunks, ragattr.StatusNoReference, ragattr.StatusTooLarge:
		w.logger.Info(msg, fields...)
	default:
		w.logger.Warn(msg, fields...)
	}
}

// adviceFor says what to look at for a status and its reason.
func adviceFor(status, reason string) string {
	if a, ok := reasonAdvice[reason]; ok {
		return a
	}
	return statusAdvice[status]
}

var statusAdvice = map[string]string{
	ragattr.StatusNoChunks:    "the span has no readable chunks: check the instrumentation against the dialect table, or set attributes.chunks",
	ragattr.StatusNoReference: "no reference, expected answer or answer is on the span: enable trace_join, or add query to reference_sources",
	ragattr.StatusTooLarge:    "more chunks than max_chunks or more text than max_retrieval_bytes: set top_k, or raise the limits",
	ragattr.StatusTimeout:     "the judge did not finish within max_wait: lower sampling_percentage, raise judge.max_concurrency or max_wait",
	ragattr.StatusBudget:      "judging would exceed judge.max_requests_per_second: lower sampling_percentage, or raise the budget",
	ragattr.StatusShutdown:    "the collector stopped before the span was judged",
	ragattr.StatusJudgeError:  "the judge failed; the reason says how",
}

var reasonAdvice = map[string]string{
	reasonPendingSpans:  "max_pending_spans spans are held already: the judge is slower than the traffic; lower sampling_percentage or raise judge.max_concurrency",
	reasonPendingBytes:  "max_pending_bytes are held already: lower sampling_percentage, set top_k, or raise max_pending_bytes",
	reasonJudgeCapacity: "at the judge's current latency the queued requests leave no time for this span within max_wait: lower sampling_percentage, raise judge.max_concurrency, or use a faster model",

	string(judge.ReasonRateLimited):    "the provider is throttling (HTTP 429): lower sampling_percentage or judge.max_requests_per_second, or raise the provider's rate limit",
	string(judge.ReasonServerError):    "the provider answers with server errors (HTTP 5xx): check its status page",
	string(judge.ReasonUnreachable):    "no reply from the judge: check judge.base_url, DNS, proxy_url, TLS and the network",
	string(judge.ReasonTimeout):        "the judge takes longer than judge.timeout: raise it (within max_wait) or use a faster model",
	string(judge.ReasonBadReply):       "the model's reply does not follow the verdict format: try judge.response_format json_object, or a stronger model",
	string(judge.ReasonAuth):           "the judge refuses the credentials (HTTP 401/403): check judge.api_key, headers or auth",
	string(judge.ReasonRejected):       "the judge refuses the request (HTTP 4xx; 404: check judge.model and judge.base_url)",
	string(judge.ReasonInvalidRequest): "the client library refused to send the request: check judge.model",
}

package judge

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ragprecision/ragprecision/judge/internal/lexical"
)

// Engine judges retrievals: one backend (an LLM endpoint or builtin:lexical)
// behind the verdict cache, in-flight de-duplication, a bounded scheduler of
// requests with retries, a budget, and a health breaker. Every backend gets
// all of them alike.
//
// Judgements are scheduled earliest deadline first, a whole retrieval at a
// time: the requests of the retrieval with the earliest deadline take the
// free slots before any later one's, so that under a burst retrievals finish
// one after another instead of all of them interleaving and none finishing.
// A fixed number of workers (max_concurrency) send requests; a judgement
// waiting for a slot is a small struct, and its prompt is built only when a
// worker sends it. A judgement that cannot finish before its deadline at the
// judge's current latency is refused at once (ErrNoCapacity), or failed as
// soon as that becomes clear, rather than paid for and thrown away.
type Engine struct {
	be       backend
	ident    string
	perChunk bool // each chunk is its own group (see job)
	// cascade: builtin:lexical decides the verdicts it is sure of (at least
	// minConfidence) before the backend is asked about the rest.
	cascade          bool
	minConfidence    float64
	firstStageParams lexical.Params // the cascade's builtin:lexical
	criteria         string
	keys             keyer
	cache            *verdictCache
	clock            Clock
	obs              Observer
	jitter           func() float64
	budget           *budget // nil: no budget
	maxRetries       int
	maxChunkChars    int
	slots            int

	mu      sync.Mutex
	cond    *sync.Cond
	closed  bool
	seq     uint64
	ready   jobHeap  // jobs with units to send, earliest deadline first
	delayed unitHeap // units waiting out a backoff, earliest first
	flights map[cacheKey]*flight
	live    map[*job]struct{}
	running map[*unit]struct{}
	queued  int // groups todo, retries ready or delayed
	wake    Timer
	wakeAt  time.Time
	latency latencyEstimate
	health  breaker
	shedAt  time.Time
	// done holds finished judgements whose callbacks are due; they are
	// called by whoever drains it, outside the lock.
	done    []completion
	notes   []func()
	workers sync.WaitGroup
}

// Options adjusts New; tests use them to inject time, randomness and HTTP.
type Option func(*options)

type options struct {
	clock      Clock
	observer   Observer
	httpClient *http.Client
	jitter     func() float64
}

// WithClock replaces the wall clock used for backoff, budgets, the health
// breaker, latency estimates and cache expiry.
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithObserver receives request, cache and health events.
func WithObserver(obs Observer) Option { return func(o *options) { o.observer = obs } }

// WithHTTPClient sets the HTTP client under go-openai's (built from the
// collector's confighttp settings: TLS, proxy, auth extensions, headers).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }

// WithJitter replaces the source of backoff jitter, a function returning
// values in [0, 1).
func WithJitter(f func() float64) Option { return func(o *options) { o.jitter = f } }

// New builds the judge c describes. Close it when done.
func New(c Config, opts ...Option) (*Engine, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	o := options{clock: realClock{}, observer: nopObserver{}, jitter: rand.Float64}
	for _, opt := range opts {
		opt(&o)
	}
	cascade, m, _ := ParseJudge(c.Model)
	var be backend
	if m.Provider == ProviderBuiltin {
		be = lexicalBackend{params: lexicalParams(c.MaxChunkChars)}
	} else {
		hc := o.httpClient
		if hc == nil {
			hc = &http.Client{Transport: defaultTransport(c.MaxConcurrency)}
		}
		be = newOpenAI(c, m, hc, o.clock)
	}
	e := newEngine(c, be, o)
	if cascade {
		e.cascade = true
		e.ident = CascadePrefix + be.id()
	}
	return e, nil
}

// newEngine runs backend be under c's scheduling, caching and budget.
func newEngine(c Config, be backend, o options) *Engine {
	e := &Engine{
		be:               be,
		perChunk:         be.batch() == 1,
		ident:            be.id(),
		minConfidence:    c.MinConfidence,
		criteria:         c.Criteria,
		keys:             keyer{salt: []byte(be.id() + "\x00" + c.BaseURL + "\x00" + PromptVersion + "\x00" + string(c.Mode) + "\x00" + criteriaSalt(be, c.Criteria))},
		cache:            newVerdictCache(cacheSizeFor(be, c.CacheSize), c.CacheTTL),
		clock:            o.clock,
		obs:              o.observer,
		jitter:           o.jitter,
		maxRetries:       c.MaxRetries,
		maxChunkChars:    c.MaxChunkChars,
		firstStageParams: lexicalParams(c.MaxChunkChars),
		slots:            c.MaxConcurrency,
		flights:          make(map[cacheKey]*flight),
		live:             make(map[*job]struct{}),
		running:          make(map[*unit]struct{}),
	}
	e.cond = sync.NewCond(&e.mu)
	e.latency.warmup = e.slots
	if c.MaxRequestsPerSecond > 0 && !be.inline() {
		e.budget = newBudget(c.MaxRequestsPerSecond, o.clock)
	}
	e.workers.Add(e.slots)
	for range e.slots {
		go e.worker()
	}
	return e
}

// defaultTransport keeps as many idle connections to the judge as requests
// can be in flight: Go's default of 2 makes every further request open a new
// connection (a TLS handshake, against a remote provider).
func defaultTransport(maxConcurrency int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(maxConcurrency, t.MaxIdleConnsPerHost)
	return t
}

// ID is the judge's "provider:model", as recorded on scored spans
// ("cascade:provider:model" for a cascade).
func (e *Engine) ID() string { return e.ident }

// cacheSizeFor is the verdict cache's size for backend be: none for an
// inline judge. builtin:lexical judges a retrieval of 5 chunks of 500 bytes
// in about 8 µs; keeping its verdicts costs more than that: a SHA-256 of
// the whole retrieval for the key, an LRU entry, and about 800 bytes of
// reasons per retrieval kept live, 80 MB at the default size, which the
// garbage collector marks on every cycle. On distinct traffic (the usual
// case: its key holds the reference, often the generated answer) that was
// a third of what judging every span cost the collector (docs/BENCHMARKS.md),
// and repeats save too little to pay for it. A cascade's LLM stage keeps
// its cache; its lexical first stage was never cached either.
func cacheSizeFor(be backend, size int) int {
	if be.inline() {
		return 0
	}
	return size
}

// noteLookups reports chunks looked up in the cache (or found in flight)
// to the observer. An inline judge has no cache and reports none.
func (e *Engine) noteLookups(hits, misses int) {
	if e.be.inline() {
		return
	}
	e.note(func() { e.obs.CacheLookups(hits, misses) })
}

// criteriaSalt is what the criteria add to cache keys: nothing for a judge
// that ignores them.
func criteriaSalt(be backend, criteria string) string {
	if be.inline() {
		return ""
	}
	return criteria
}

// Inline reports whether the judge is cheap and local enough (builtin:lexical)
// to be called in the caller's goroutine with JudgeInline.
func (e *Engine) Inline() bool { return e.be.inline() }

// isBlank reports whether a chunk has no text: it keeps its rank and is not
// relevant, decided without the judge, since a request would only pay to be
// told so. Every path to the judge decides blank chunks this way.
func isBlank(chunk string) bool { return strings.TrimSpace(chunk) == "" }

// EmptyChunkReason is the reason of a chunk with no text, which is decided
// not relevant without asking the judge.
const EmptyChunkReason = "empty chunk: no text to judge"

// job is one retrieval to judge. While it waits for a worker it is only
// this struct and its arrays: requests (units) and the records that
// de-duplicate them (flights) are made when a worker takes its next group.
type job struct {
	seq        uint64
	query, ref string
	verdicts   []Verdict
	// texts are the chunks to judge (not empty, cut to max_chunk_chars),
	// idx their indices in verdicts, keys the cache keys of their groups:
	// group g is texts[g] in per-chunk mode, all of texts (g = 0) for
	// judges that see the chunks together.
	texts []string
	idx   []int
	keys  []cacheKey
	// gstate is each group's state: groupTodo until a worker takes it.
	gstate []uint8
	next   int // first group that may still be todo
	todo   int // groups in groupTodo
	// retries are units of this job ready to be sent again.
	retries []*unit

	left     int // chunks not decided yet
	usage    Usage
	deadline time.Time // zero: none
	done     func(Result, error)
	finished bool
	probe    bool
	started  bool
	heapIdx  int
	// reservedFor marks the groups for which Admit reserved a budget token
	// (1) that has been neither spent on a request nor given back: only
	// those give a token back when another request answers them.
	reservedFor []uint8
	// hits counts the chunks answered before Commit without a request of
	// their own (from the cache, or by a flight), for the observer.
	hits int
}

// Group states.
const (
	groupTodo    uint8 = iota // not taken yet
	groupWaiting              // a request for it is in flight (this job's or another's)
	groupDone                 // decided
)

// groupOf returns group g's texts and chunk indices.
func (j *job) groupOf(g int, perChunk bool) ([]string, []int) {
	if perChunk {
		return j.texts[g : g+1], j.idx[g : g+1]
	}
	return j.texts, j.idx
}

// runnable is the number of sends the job has ready: todo groups and
// retries.
func (j *job) runnable() int { return j.todo + len(j.retries) }

// prepare cuts the texts to max_chunk_chars, decides empty chunks, and
// computes the groups' cache keys.
func (e *Engine) prepare(req Request) *job {
	query, ref := TruncateRunes(req.Query, e.maxChunkChars), TruncateRunes(req.Reference, e.maxChunkChars)
	j := &job{query: query, ref: ref, verdicts: make([]Verdict, len(req.Chunks)), heapIdx: -1}
	n := 0
	for _, c := range req.Chunks {
		if !isBlank(c) {
			n++
		}
	}
	j.texts, j.idx = make([]string, 0, n), make([]int, 0, n)
	for i, c := range req.Chunks {
		if isBlank(c) {
			j.verdicts[i] = Verdict{Relevant: false, Reason: EmptyChunkReason}
			continue
		}
		j.texts = append(j.texts, TruncateRunes(c, e.maxChunkChars))
		j.idx = append(j.idx, i)
	}
	if e.cascade && n > 0 {
		n = e.firstStage(j)
	}
	j.left = n
	if n == 0 {
		return j
	}
	if e.perChunk {
		j.keys = make([]cacheKey, n)
		for k := range j.texts {
			j.keys[k] = e.keys.key(query, ref, j.texts[k:k+1])
		}
	} else {
		j.keys = []cacheKey{e.keys.key(query, ref, j.texts)}
	}
	// One allocation for the groups' states and their budget reservations.
	buf := make([]uint8, 2*len(j.keys))
	j.gstate, j.reservedFor = buf[:len(j.keys):len(j.keys)], buf[len(j.keys):]
	j.todo = len(j.keys)
	return j
}

// firstStage lets builtin:lexical decide the verdicts it is sure of; the
// rest stay for the LLM. With criteria, which builtin:lexical cannot read,
// only its sure "not relevant" verdicts are final: criteria can only narrow
// what is relevant. It returns the number of chunks left.
func (e *Engine) firstStage(j *job) int {
	vs := lexicalVerdicts(e.firstStageParams, j.query, j.ref, j.texts)
	texts, idx := j.texts[:0], j.idx[:0]
	for k, v := range vs {
		if v.Confidence >= e.minConfidence && (e.criteria == "" || !v.Relevant) {
			j.verdicts[j.idx[k]] = v
			continue
		}
		texts, idx = append(texts, j.texts[k]), append(idx, j.idx[k])
	}
	j.texts, j.idx = texts, idx
	return len(texts)
}

// decideGroupLocked records group g's verdicts on j.
func (e *Engine) decideGroupLocked(j *job, g int, vs []Verdict) {
	_, idx := j.groupOf(g, e.perChunk)
	for i, ci := range idx {
		j.verdicts[ci] = vs[i]
	}
	j.left -= len(idx)
	if j.gstate[g] == groupTodo {
		j.todo--
	}
	j.gstate[g] = groupDone
}

// fromCache decides the todo groups the cache holds. e.mu is held, or j is
// not shared yet.
func (e *Engine) fromCache(j *job, now time.Time) {
	for g, k := range j.keys {
		if j.gstate[g] != groupTodo {
			continue
		}
		if vs, ok := e.cache.get(k, now); ok {
			_, idx := j.groupOf(g, e.perChunk)
			if len(vs) != len(idx) {
				continue
			}
			j.hits += len(idx)
			e.decideGroupLocked(j, g, vs)
		}
	}
}

// JudgeInline judges req in the caller's goroutine. It is for inline judges
// (see Inline); others return an error. Inline judges are not cached (see
// cacheSizeFor), so it is the judge and nothing else: no job, no keys.
func (e *Engine) JudgeInline(req Request) (Result, error) {
	if !e.be.inline() {
		return Result{}, errors.New("judge " + e.be.id() + " cannot judge inline")
	}
	query, ref := TruncateRunes(req.Query, e.maxChunkChars), TruncateRunes(req.Reference, e.maxChunkChars)
	// The chunks go to the judge as they are unless one is empty (decided
	// here) or longer than max_chunk_chars: only then is a list made.
	texts, idx := req.Chunks, []int(nil)
	for i, c := range req.Chunks {
		cut := TruncateRunes(c, e.maxChunkChars)
		blank := isBlank(c)
		if idx == nil && (blank || len(cut) != len(c)) {
			texts, idx = make([]string, i, len(req.Chunks)), make([]int, i, len(req.Chunks))
			copy(texts, req.Chunks[:i])
			for k := range idx {
				idx[k] = k
			}
		}
		if idx != nil && !blank {
			texts, idx = append(texts, cut), append(idx, i)
		}
	}
	var vs []Verdict
	var usage Usage
	if len(texts) > 0 {
		var err error
		if vs, usage, err = e.be.attempt(context.Background(), query, ref, texts); err != nil {
			return Result{}, err
		}
		if len(vs) != len(texts) {
			return Result{Usage: usage}, badReply(errors.New("a verdict count unlike the chunk count"))
		}
	}
	if idx == nil {
		return Result{Verdicts: vs, Usage: usage}, nil
	}
	verdicts := make([]Verdict, len(req.Chunks))
	for i := range verdicts {
		verdicts[i] = Verdict{Relevant: false, Reason: EmptyChunkReason}
	}
	for k, i := range idx {
		verdicts[i] = vs[k]
	}
	return Result{Verdicts: verdicts, Usage: usage}, nil
}

// Judge judges req and waits for the verdicts, until ctx ends. A deadline
// on ctx is the judgement's deadline, which the scheduler plans with.
func (e *Engine) Judge(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if e.be.inline() {
		return e.JudgeInline(req)
	}
	var within time.Duration
	if dl, ok := ctx.Deadline(); ok {
		if within = time.Until(dl); within <= 0 {
			return Result{}, context.DeadlineExceeded
		}
	}
	t, err := e.Admit(req, within)
	if err != nil {
		return Result{}, err
	}
	type outcome struct {
		res Result
		err error
	}
	ch := make(chan outcome, 1)
	t.Commit(func(res Result, err error) { ch <- outcome{res, err} })
	select {
	case o := <-ch:
		if errors.Is(o.err, ErrDeadline) {
			// The judgement's deadline is ctx's: the scheduler may reach it
			// a moment before ctx reports it, or give up as it comes near.
			return Result{Usage: o.res.Usage}, context.DeadlineExceeded
		}
		return o.res, o.err
	case <-ctx.Done():
		t.Cancel(ctx.Err())
		o := <-ch
		if o.err == nil {
			return o.res, nil // finished just before
		}
		return Result{Usage: o.res.Usage}, ctx.Err()
	}
}

// Ticket is an admitted judgement: what it needs is reserved (budget, a
// place in the schedule), but nothing is sent until Commit. The processor
// admits a span while it is still in its batch, so that a refusal lets the
// span go on with the batch and a status, and commits it once the batch has
// been accepted downstream.
type Ticket struct {
	e     *Engine
	j     *job
	state int // ticketAdmitted, ticketCommitted, ticketAbandoned
	// cancelled is the error given to Cancel before Commit: Commit then
	// ends the judgement with it at once.
	cancelled error
}

const (
	ticketAdmitted = iota
	ticketCommitted
	ticketAbandoned
)

// Admit checks that req can be judged within the given time (0: no
// deadline) and reserves what that takes. It fails at once with
// ErrOverBudget, ErrNoCapacity, ErrClosed, or the judge's failure (an
// *Error) when the health breaker is open.
func (e *Engine) Admit(req Request, within time.Duration) (*Ticket, error) {
	j := e.prepare(req)
	now := e.clock.Now()
	if within > 0 {
		j.deadline = now.Add(within)
	}
	e.fromCache(j, now)

	e.mu.Lock()
	t, err := e.admitLocked(j, now)
	e.mu.Unlock()
	e.drain()
	return t, err
}

func (e *Engine) admitLocked(j *job, now time.Time) (*Ticket, error) {
	if e.closed {
		return nil, ErrClosed
	}
	// Requests this judgement would make: one per distinct key not already
	// being decided for another judgement. (A refused judgement is dropped,
	// marks and all.)
	need := 0
	for g, k := range j.keys {
		if j.gstate[g] != groupTodo {
			continue
		}
		if _, ok := e.flights[k]; ok || (e.perChunk && duplicateKey(j.keys[:g], k)) {
			continue
		}
		j.reservedFor[g] = 1
		need++
	}
	if need > 0 {
		ok, probe := e.health.admit(now)
		if !ok {
			return nil, e.health.openError()
		}
		j.probe = probe
		if err := e.capacityLocked(j, need, now); err != nil {
			if probe {
				e.health.probeEnded()
			}
			return nil, err
		}
		if e.budget != nil && !e.budget.take(need) {
			if probe {
				e.health.probeEnded()
			}
			return nil, ErrOverBudget
		}
	}
	return &Ticket{e: e, j: j}, nil
}

func duplicateKey(keys []cacheKey, k cacheKey) bool {
	for _, o := range keys {
		if o == k {
			return true
		}
	}
	return false
}

// capacityLocked refuses a judgement that, behind the requests already
// queued and in flight, would finish after its deadline at the judge's
// current latency.
func (e *Engine) capacityLocked(j *job, need int, now time.Time) error {
	if j.deadline.IsZero() || e.latency.mean == 0 {
		return nil
	}
	if e.overrunsLocked(e.queued+len(e.running)+need, now, j.deadline) {
		return ErrNoCapacity
	}
	return nil
}

// Commit starts the judgement. done is called exactly once, from another
// goroutine or before Commit returns, with one verdict per chunk or an
// error: ErrDeadline, ErrNoCapacity, ErrClosed, the error given to Cancel,
// or an *Error.
func (t *Ticket) Commit(done func(Result, error)) {
	e, j := t.e, t.j
	e.mu.Lock()
	if t.state != ticketAdmitted {
		e.mu.Unlock()
		panic("judge: ticket committed twice or after Abandon")
	}
	t.state = ticketCommitted
	// A judgement that ends here has done called here, not queued on
	// e.done: another goroutine draining meanwhile would call it later, and
	// the caller relies on it being called before Commit returns (Decided).
	if e.closed || t.cancelled != nil {
		err := t.cancelled
		if e.closed {
			err = ErrClosed
		}
		j.todo = 0 // never queued
		e.failLocked(j, err)
		e.mu.Unlock()
		e.drain()
		done(Result{Usage: j.usage}, err)
		return
	}
	e.seq++
	j.seq = e.seq
	e.live[j] = struct{}{}
	// Decided meanwhile by another judgement, or being decided now: wait
	// for that rather than ask again.
	e.fromCache(j, e.clock.Now())
	for g, k := range j.keys {
		if j.gstate[g] == groupTodo {
			if f, ok := e.flights[k]; ok {
				j.hits += e.attachLocked(j, g, f)
			}
		}
	}
	for g := range j.keys {
		if j.gstate[g] != groupTodo {
			e.unreserveGroupLocked(j, g) // answered without a request of its own
		}
	}
	// Groups still todo are reported when a worker looks them up.
	if hits := j.hits; hits > 0 {
		e.noteLookups(hits, 0)
	}
	if j.left == 0 {
		e.completeLocked(j)
		e.mu.Unlock()
		e.drain()
		done(Result{Verdicts: j.verdicts, Usage: j.usage}, nil)
		return
	}
	j.done = done
	if j.runnable() > 0 {
		e.queued += j.todo
		e.ready.push(j)
		e.cond.Broadcast()
	}
	e.mu.Unlock()
	e.drain()
}

// attachLocked makes job j wait for flight f to decide its group g, and
// returns the number of chunks in the group.
func (e *Engine) attachLocked(j *job, g int, f *flight) int {
	_, idx := j.groupOf(g, e.perChunk)
	f.waiters = append(f.waiters, waiter{j: j, idx: idx, g: g})
	if j.gstate[g] == groupTodo {
		j.todo--
	}
	j.gstate[g] = groupWaiting
	return len(idx)
}

// Decided reports whether the judgement needs no request: every chunk was
// decided at admission (empty, from the cache, or by a cascade's first
// stage). Commit then calls done before it returns.
func (t *Ticket) Decided() bool { return t.j.left == 0 }

// Abandon gives back what Admit reserved; nothing is judged.
func (t *Ticket) Abandon() {
	e := t.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.state != ticketAdmitted {
		return
	}
	t.state = ticketAbandoned
	e.unreserveAllLocked(t.j)
	if t.j.probe {
		e.health.probeEnded()
	}
}

// Cancel ends a committed judgement with err, unless it has finished
// already; its done is then called with err. Before Commit, it makes Commit
// end the judgement with err at once (a deadline timer may fire between
// the two).
func (t *Ticket) Cancel(err error) {
	e := t.e
	e.mu.Lock()
	switch t.state {
	case ticketCommitted:
		e.failLocked(t.j, err)
	case ticketAdmitted:
		if t.cancelled == nil {
			t.cancelled = err
		}
	}
	e.mu.Unlock()
	e.drain()
}

func (e *Engine) refundLocked(n int) {
	if e.budget != nil && n > 0 {
		e.budget.refund(n)
	}
}

func allPositions(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// Close ends every judgement not finished (ErrClosed), cancels the requests
// in flight, stops the workers and releases idle connections.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for j := range e.live {
		e.failLocked(j, ErrClosed)
	}
	for u := range e.running {
		if u.cancel != nil {
			u.cancel()
		}
	}
	if e.wake != nil {
		e.wake.Stop()
		e.wake = nil
	}
	e.cond.Broadcast()
	e.mu.Unlock()
	e.drain()
	e.workers.Wait()
	e.be.close()
	return nil
}

// completion is a finished judgement whose callback is due.
type completion struct {
	j   *job
	res Result
	err error
}

// drain calls the callbacks of finished judgements and the observer calls
// noted under the lock, outside it: callbacks forward spans and report
// status, which must not happen under the scheduler's lock.
func (e *Engine) drain() {
	for {
		e.mu.Lock()
		done, notes := e.done, e.notes
		e.done, e.notes = nil, nil
		e.mu.Unlock()
		if len(done) == 0 && len(notes) == 0 {
			return
		}
		for _, n := range notes {
			n()
		}
		for _, c := range done {
			c.j.done(c.res, c.err)
		}
	}
}

// note defers an observer call until the lock is released.
func (e *Engine) note(f func()) { e.notes = append(e.notes, f) }

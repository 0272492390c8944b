package lexical

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The benchmarks judge spans of the shape the collector sees (5 chunks of
// 500 bytes, the load of docs/BENCHMARKS.md; 10 chunks of 1 KB) and report, next
// to the usual figures, the frozen reference judge's cost measured in the
// same run and the ratios to it:
//
//	go test -run '^$' -bench . -benchtime 2s ./judge/internal/lexical/

// benchQuery and benchReference are a HotpotQA dev question and its answer
// (CC BY-SA 4.0); benchText is its paragraphs, the text chunks are cut from.
const (
	benchQuery     = "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?"
	benchReference = "Chief of Protocol"
	benchText      = `Meet Corliss Archer, a program from radio's Golden Age, ran from January 7, 1943 to September 30, 1956. Although it was CBS's answer to NBC's popular "A Date with Judy", it was also broadcast by NBC in 1948 as a summer replacement for "The Bob Hope Show". From October 3, 1952 to June 26, 1953, it aired on ABC, finally returning to CBS. Despite the program's long run, fewer than 24 episodes are known to exist. ` +
		`Shirley Temple Black (April 23, 1928 – February 10, 2014) was an American actress, singer, dancer, businesswoman, and diplomat who was Hollywood's number one box-office draw as a child actress from 1935 to 1938. As an adult, she was named United States ambassador to Ghana and to Czechoslovakia and also served as Chief of Protocol of the United States. ` +
		`Janet Marie Waldo (February 4, 1920 – June 12, 2016) was an American radio and voice actress. She is best known in animation for voicing Judy Jetson, Nancy in "Shazzan", Penelope Pitstop, and Susan Sunshine. On radio, she was the title character in "Meet Corliss Archer". ` +
		`The post of Lord High Treasurer or Lord Treasurer was an English government position and has been a British government position since the Acts of Union of 1707. A holder of the post would be the third-highest-ranked Great Officer of State, below the Lord High Steward and the Lord High Chancellor. ` +
		`Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer. In the film, two teenage girls cause their respective parents much concern when they start to become interested in boys. The parents' bickering about which girl is the worse influence causes more problems than it solves. ` +
		`Charles Craft (May 9, 1902 – September 19, 1968) was an English-born American film and television editor. Born in the county of Sussex, he came to the United States and worked on films including "The Sea Hawk" and "Kiss and Tell".`
)

// benchChunks cuts n chunks of about size bytes from benchText, each
// starting at a random word.
func benchChunks(n, size int) []string {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	words := strings.Fields(benchText)
	chunks := make([]string, n)
	for i := range chunks {
		var b strings.Builder
		for w := rng.IntN(len(words)); b.Len() < size; w = (w + 1) % len(words) {
			b.WriteString(words[w])
			b.WriteByte(' ')
		}
		chunks[i] = b.String()
	}
	return chunks
}

var spanShapes = []struct{ chunks, bytes int }{{5, 500}, {10, 1000}}

// BenchmarkJudgeSpan judges a whole span with Judge, as builtin:lexical
// does: the query is analysed for each span.
func BenchmarkJudgeSpan(b *testing.B) {
	for _, shape := range spanShapes {
		chunks := benchChunks(shape.chunks, shape.bytes)
		b.Run(fmt.Sprintf("%dx%dB", shape.chunks, shape.bytes), func(b *testing.B) {
			benchAgainstReference(b, chunks, func() { Judge(benchQuery, benchReference, chunks) })
		})
	}
}

// BenchmarkPreparedSpan judges spans with a query and reference prepared
// once, what a caller that sees the same question many times can do.
func BenchmarkPreparedSpan(b *testing.B) {
	for _, shape := range spanShapes {
		chunks := benchChunks(shape.chunks, shape.bytes)
		b.Run(fmt.Sprintf("%dx%dB", shape.chunks, shape.bytes), func(b *testing.B) {
			pr := DefaultParams().Prepare(benchQuery, benchReference)
			benchAgainstReference(b, chunks, func() { pr.Judge(chunks) })
		})
	}
}

// BenchmarkJudgeChunk judges retrievals of one 500-byte chunk: the cost of
// a chunk whose query analysis is shared with no other.
func BenchmarkJudgeChunk(b *testing.B) {
	chunks := benchChunks(1, 500)
	benchAgainstReference(b, chunks, func() { Judge(benchQuery, benchReference, chunks) })
}

// benchAgainstReference runs three sub-benchmarks on the same chunks: the
// frozen reference judge, then judge, each with its cost per chunk, judge
// with its allocation ratios to the reference; and "paired", which calls
// them in turn, timing each call, and reports the speed-up: on a shared
// machine, load that comes and goes then weighs on both alike.
func benchAgainstReference(b *testing.B, chunks []string, judge func()) {
	reference := func() { refJudge(benchQuery, benchReference, chunks) }
	var ref loopCost
	b.Run("reference", func(b *testing.B) {
		ref = measure(b, len(chunks), reference)
	})
	b.Run("optimised", func(b *testing.B) {
		got := measure(b, len(chunks), judge)
		if ref.ns == 0 {
			return // the reference was filtered out by -bench
		}
		b.ReportMetric(ref.allocs/max(got.allocs, 1e-9), "x-fewer-allocs")
		b.ReportMetric(ref.bytes/max(got.bytes, 1e-9), "x-fewer-B")
	})
	b.Run("paired", func(b *testing.B) {
		var refTime, judgeTime time.Duration
		for b.Loop() {
			start := time.Now()
			reference()
			mid := time.Now()
			judge()
			refTime += mid.Sub(start)
			judgeTime += time.Since(mid)
		}
		b.ReportMetric(float64(refTime)/float64(judgeTime), "speedup")
		b.ReportMetric(float64(judgeTime.Nanoseconds())/float64(b.N*len(chunks)), "ns/chunk")
		b.ReportMetric(float64(refTime.Nanoseconds())/float64(b.N*len(chunks)), "ref-ns/chunk")
	})
}

// loopCost is what one call costs on average.
type loopCost struct{ ns, allocs, bytes float64 }

// measure runs judge in a b.Loop and reports its cost per chunk.
func measure(b *testing.B, chunks int, judge func()) loopCost {
	b.ReportAllocs()
	allocs0, bytes0 := memStats()
	for b.Loop() {
		judge()
	}
	allocs1, bytes1 := memStats()
	n := float64(b.N)
	c := loopCost{
		ns:     float64(b.Elapsed().Nanoseconds()) / n,
		allocs: float64(allocs1-allocs0) / n,
		bytes:  float64(bytes1-bytes0) / n,
	}
	b.ReportMetric(c.ns/float64(chunks), "ns/chunk")
	return c
}

// memStats returns the allocations and bytes allocated so far.
func memStats() (allocs, bytes uint64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs, m.TotalAlloc
}

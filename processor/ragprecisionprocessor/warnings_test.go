package ragprecisionprocessor

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ragprecision/ragprecision/config"
	"github.com/ragprecision/ragprecision/internal/chattest"
	"github.com/ragprecision/ragprecision/internal/ragattr"
)

// A judge or gateway that echoes the request in its error reply does not
// put the key, header values or span content into the log.
func TestEchoingJudgeLeaksNothing(t *testing.T) {
	const (
		key    = "sk-echo-secret-1234567890"
		header = "gw-header-secret-value"
		chunk  = "CONFIDENTIAL chunk about the merger in Paris"
	)
	replies := []func(r chattest.Request) chattest.Reply{
		func(r chattest.Request) chattest.Reply { // 401 quoting the credentials
			return chattest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + r.Header.Get("Authorization") + ` (` + r.Header.Get("X-Gateway-Key") + `)","type":"invalid_request_error"}}`}
		},
		func(r chattest.Request) chattest.Reply { // 400 quoting the request
			body, _ := jsonString(r.User())
			return chattest.Reply{Status: 400, Body: `{"error":{"message":"could not parse messages: ` + body + `"}}`}
		},
		func(r chattest.Request) chattest.Reply { // an HTML gateway page echoing everything
			return chattest.Reply{Status: 502, Body: "<html><body><h1>502 Bad Gateway</h1><pre>Authorization: " + r.Header.Get("Authorization") +
				"\nX-Gateway-Key: " + r.Header.Get("X-Gateway-Key") + "\n" + r.User() + "</pre></body></html>"}
		},
	}
	for i, reply := range replies {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			srv := chatServer(t, func(_ int, r chattest.Request) chattest.Reply { return reply(r) })
			core, logs := observer.New(zapcore.DebugLevel)
			h := newHarnessLogged(t, zap.New(core), func(c *config.Config) {
				llmJudge(srv.URL)(c)
				c.Judge.APIKey = key
				c.Judge.ClientConfig.Headers = append(c.Judge.ClientConfig.Headers, configopaquePair("X-Gateway-Key", header))
			})
			b := newBatch("svc")
			b.project("retrieve", "SECRET question", "PRIVATE reference", chunk)
			h.consume(b.td)
			h.waitSpans(1)
			expectStatus(t, h.span("retrieve"), ragattr.StatusJudgeError)
			if logs.Len() == 0 {
				t.Fatal("the failure was not logged")
			}
			expectLogsFree(t, logs, key, key[:12], header, "CONFIDENTIAL", "merger", "SECRET question", "PRIVATE reference")
		})
	}
}

// Secrets and span content never reach logs above debug, even on
// the failure paths that log, and a reply echoing the chunk is not quoted.
func TestNoContentOrSecretsInLogs(t *testing.T) {
	const chunk = "CONFIDENTIAL chunk text about Paris"
	srv := chatServer(t, func(int, chattest.Request) chattest.Reply {
		return chattest.Reply{Content: `{"verdict": "` + chunk + `"}`}
	})
	core, logs := observer.New(zapcore.InfoLevel)
	h := newHarnessLogged(t, zap.New(core), func(c *config.Config) { llmJudge(srv.URL)(c); c.Judge.APIKey = "sk-very-secret" })
	b := newBatch("svc")
	b.project("retrieve", "SECRET question", "PRIVATE reference", chunk)
	h.consume(b.td)
	h.waitSpans(1)
	expectStatus(t, h.span("retrieve"), ragattr.StatusJudgeError)
	if logs.Len() == 0 {
		t.Fatal("a judge failure should be logged")
	}
	expectLogsFree(t, logs, "CONFIDENTIAL", "SECRET question", "PRIVATE reference", "sk-very-secret")
}

// expectLogsFree fails if any logged message or field contains one of the
// secrets.
func expectLogsFree(t *testing.T, logs *observer.ObservedLogs, secrets ...string) {
	t.Helper()
	for _, e := range logs.All() {
		line := e.Message
		for k, v := range e.ContextMap() {
			line += " " + k + "=" + fmt.Sprint(v)
		}
		for _, secret := range secrets {
			if strings.Contains(line, secret) {
				t.Fatalf("log line %q contains %q", line, secret)
			}
		}
	}
}

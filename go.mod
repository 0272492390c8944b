module github.com/ragprecision/ragprecision

go 1.26.8

require (
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	github.com/sashabaranov/go-openai v1.43.0 // indirect
)

package main

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// otlpConfigured reports whether the environment asks for trace export,
// with OpenTelemetry's standard variables.
func otlpConfigured(getenv func(string) string) bool {
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// tracerProvider sends CodeCall's spans to an OTLP/HTTP collector when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set
// (the exporter reads the other OTEL_EXPORTER_OTLP_* variables, and the SDK
// OTEL_SERVICE_NAME, itself). Without them it returns nil: no exporter, no
// cost. shutdown flushes the spans still buffered.
func tracerProvider(ctx context.Context) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	if !otlpConfigured(os.Getenv) {
		return nil, func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry exporter (OTEL_EXPORTER_OTLP_*): %w", err)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	return sdk, sdk.Shutdown, nil
}

package ast

// Test helpers for the external tests of package ast (ast_test), which
// import ast/tsstrip; package ast itself cannot.
var (
	RunPlan           = runPlan
	RejectionPosition = rejectionPosition
)

// BenchPlan is the typical plan of the benchmarks.
const BenchPlan = benchPlan

// CheckLocation is FuzzValidate's check of an error's location.
var CheckLocation = checkLocation

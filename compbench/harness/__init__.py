"""The harness: agreement checks, sweeps under hard time limits, plots, reports and the demo."""

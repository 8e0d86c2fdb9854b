"""Running the processes: components with start/stop, signals, the state-directory lock."""

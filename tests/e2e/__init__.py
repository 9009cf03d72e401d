"""End-to-end tests: real processes, a real terminal (tmux), a real Secret Service, a real model."""

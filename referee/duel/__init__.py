"""Duels: "is my new bot better?" Paired games on the same deals and a sequential test (docs/duel.md)."""

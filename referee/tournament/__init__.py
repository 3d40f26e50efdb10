"""Tournaments: what is played and in what order (``schedule``), the config file (``config``), running games
concurrently with resume (``runner``), and standings (``standings``)."""

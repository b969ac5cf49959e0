"""Agents, managed process launch, conversation archives, agent hooks, session events."""

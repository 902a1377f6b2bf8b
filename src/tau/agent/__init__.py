"""tau.agent: the agent run, from user input to idle (built on tau.ai only)."""

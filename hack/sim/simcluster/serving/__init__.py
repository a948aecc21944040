"""The simulated cluster's inference-serving stack: a CPU OpenAI-compatible server.

It stands in for a vLLM or Dynamo frontend pod (`server`), streaming tokens at a
set rate after a set first-token delay, so a real load generator measures it.
`images` says which pod images the runtime plays with it and with the load
generator installed in the sim cache.
"""

"""``bedrock-converse-stream``: Amazon Bedrock's ConverseStream API.

The request is plain JSON posted over the shared HTTP client and signed with SigV4 (or sent
with a Bedrock API key as a bearer token); the response is the binary
``application/vnd.amazon.eventstream`` framing, decoded with botocore's frame parser (which
checks both CRCs). botocore is the ``[bedrock]`` extra: this package is imported only when a
Bedrock model is used.

* :mod:`.options`: :class:`~.options.BedrockOptions`;
* :mod:`.request`: ``build_request`` (messages, cache points, tools, reasoning fields);
* :mod:`.auth`: the region, and the bearer token or SigV4 signature;
* :mod:`.decoder`: :class:`~.decoder.BedrockDecoder`, event-stream frames into builder calls;
* :mod:`.provider`: the record, and the unified reasoning level mapped to Claude's thinking.

Choices that differ from pi-ai, in one place:

* Redacted reasoning (``redactedContent``) is kept as a redacted thinking block and replayed
  to the same model; pi-ai drops it.
* Unsigned Claude thinking (a stream cut before its signature) and other models' thinking
  are left out of requests rather than sent as text.
* Server-side tool use (Nova's code interpreter…) is not a tau tool call: the client cannot
  run it, so it is skipped, and only the model's own text and calls remain.
* Temperature is left out when Claude's extended thinking is on (Anthropic rejects the pair).
* ``model.base_url`` is used as the endpoint when it is not an ``amazonaws.com`` URL (a proxy
  or a local test server); otherwise the endpoint follows the region.
* Credentials: ``AWS_BEARER_TOKEN_BEDROCK`` (or an ``api_key`` option other than the
  ``<authenticated>`` marker) is sent as a bearer token; otherwise botocore's standard chain
  (environment, profile files, SSO, container and instance roles) signs the request.
  ``AWS_BEDROCK_SKIP_AUTH=1`` sends it unsigned.
"""

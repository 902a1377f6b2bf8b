"""The ``google-gemini-cli`` protocol: Cloud Code Assist's ``streamGenerateContent``, which the
Gemini CLI and Antigravity subscriptions reach (``tau login google-gemini-cli`` /
``google-antigravity``).

The Gemini request and response, each in an envelope: the request names the project and
model beside the Gemini body (``{"project", "model", "request": {...}}``), and every streamed
chunk carries a Gemini response under ``"response"``.

* :mod:`.options`: its options (the Gemini ones plus ``project_id``);
* :mod:`.request`: the envelope around the Gemini body, and the request;
* :mod:`.decoder`: the Gemini decoder, reading each chunk out of its envelope;
* :mod:`.provider`: the record, ``PROVIDER``.
"""

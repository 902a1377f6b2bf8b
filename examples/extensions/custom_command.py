"""Two slash commands: `/greet NAME` says hello (`tau --greeting=Howdy` changes the word: a
flag of the extension's own), and `/remember TEXT` keeps a note in the session file (read back
when the session is resumed) and asks the model about it."""

from tau.cli.extensions import ExtensionAPI


def setup(tau: ExtensionAPI) -> None:
    tau.register_flag("greeting", "the word /greet says", default="Hello")

    def greet(api: ExtensionAPI, argument: str) -> None:
        api.notify(f"{api.flag('greeting')}, {argument or 'world'}!")

    async def remember(api: ExtensionAPI, argument: str) -> None:
        if not argument:
            notes = api.entries("note")
            api.notify(f"{len(notes)} notes: " + "; ".join(notes) if notes else "no notes yet")
            return
        api.append_entry("note", argument)
        await api.send(f"Remember this for later: {argument}")

    tau.register_command("greet", "say hello to NAME", greet)
    tau.register_command("remember", "keep TEXT as a note (alone: list the notes)", remember)

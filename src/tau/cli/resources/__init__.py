"""What a user adds to ``tau`` without writing code, in pi's formats: skills, prompt templates
and context files.

:func:`load_resources` discovers them (see :mod:`tau.cli.resources.loader` for where, and in
which order); :class:`Resources` holds them, puts the skills' names into the system prompt,
declares ``/template`` and ``/skill:name`` in a slash-command registry and expands a message
that names one.
"""

from tau.cli.resources.frontmatter import FrontMatterError, read_head, strip_front_matter
from tau.cli.resources.loader import (
    CONTEXT_FILES,
    ResourceError,
    ResourceOptions,
    Resources,
    context_files,
    load_resources,
    report_line,
    report_problems,
    skill_roots,
    template_roots,
)
from tau.cli.resources.skills import Problem, Skill, skills_prompt
from tau.cli.resources.templates import PromptTemplate, split_args, substitute

__all__ = [
    "CONTEXT_FILES",
    "FrontMatterError",
    "Problem",
    "PromptTemplate",
    "ResourceError",
    "ResourceOptions",
    "Resources",
    "Skill",
    "context_files",
    "load_resources",
    "read_head",
    "report_line",
    "report_problems",
    "skill_roots",
    "skills_prompt",
    "split_args",
    "strip_front_matter",
    "substitute",
    "template_roots",
]

"""The markers config.toml's tables are declared with: light stand-ins for pydantic's
`Field`, `BeforeValidator`, `AfterValidator` and `with_config`.

A table's fields carry them in their Annotated metadata, so each bound and rule is written
once, beside its default. pydantic is imported only when a table with keys in it is
validated (catalog.config): each marker becomes pydantic's own there, through the
`__get_pydantic_core_schema__` hook pydantic honours on Annotated metadata. A start with no
config.toml (or empty tables) never loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

T = TypeVar("T")
# Unknown keys are a problem, never ignored (pydantic's ConfigDict: a plain dict).
STRICT: dict[str, Any] = {"extra": "forbid"}


def with_config(config: dict[str, Any]) -> Callable[[type[T]], type[T]]:
    """The table's pydantic config, set as pydantic's own `with_config` sets it."""

    def mark(table: type[T]) -> type[T]:
        table.__pydantic_config__ = config  # type: ignore[attr-defined]
        return table

    return mark


class Field:
    """A field's bounds, strictness (never coerced: "5" is not 5) and the words for what it
    takes; read as pydantic's `Field` would be."""

    __slots__ = ("description", "ge", "le", "strict")

    def __init__(
        self,
        *,
        ge: float | None = None,
        le: float | None = None,
        strict: bool | None = None,
        description: str | None = None,
    ) -> None:
        self.ge, self.le, self.strict, self.description = ge, le, strict, description

    @property
    def metadata(self) -> list[Field]:
        """Its bounds as pydantic's FieldInfo lists them, things with a `ge` or an `le`:
        itself, when it has one."""
        return [self] if (self.ge, self.le) != (None, None) else []

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        from typing import Annotated

        import pydantic

        given = {name: getattr(self, name) for name in self.__slots__}
        real = pydantic.Field(**{k: v for k, v in given.items() if v is not None})
        return handler(Annotated[source, real])


class _Validator:
    """A function pydantic runs on a field's value, named after pydantic's own kind."""

    __slots__ = ("func",)
    kind = ""  # the pydantic class it becomes

    def __init__(self, func: Callable[[Any], Any]) -> None:
        self.func = func

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        import pydantic

        real = getattr(pydantic, self.kind)(self.func)
        return real.__get_pydantic_core_schema__(source, handler)  # type: ignore[no-any-return]


class BeforeValidator(_Validator):
    """Runs on the raw value, before its type is checked (pydantic's BeforeValidator)."""

    __slots__ = ()
    kind = "BeforeValidator"


class AfterValidator(_Validator):
    """Runs on the value once its type is checked (pydantic's AfterValidator)."""

    __slots__ = ()
    kind = "AfterValidator"

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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Ge:
    ge: float


@dataclass(frozen=True)
class Le:
    le: float


@dataclass(frozen=True)
class Field:
    """A field's bounds, strictness (never coerced: "5" is not 5) and the words for what it
    takes; read as pydantic's `Field` would be."""

    ge: float | None = None
    le: float | None = None
    strict: bool | None = None
    description: str | None = None

    @property
    def metadata(self) -> list[Ge | Le]:
        """Its bounds, as pydantic's FieldInfo lists them."""
        low = [Ge(self.ge)] if self.ge is not None else []
        return [*low, *([Le(self.le)] if self.le is not None else [])]

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        from typing import Annotated

        import pydantic

        given = {k: v for k, v in vars(self).items() if v is not None}
        return handler(Annotated[source, pydantic.Field(**given)])


@dataclass(frozen=True)
class BeforeValidator:
    """Runs on the raw value, before its type is checked (pydantic's BeforeValidator)."""

    func: Callable[[Any], Any]

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        import pydantic

        return pydantic.BeforeValidator(self.func).__get_pydantic_core_schema__(source, handler)


@dataclass(frozen=True)
class AfterValidator:
    """Runs on the value once its type is checked (pydantic's AfterValidator)."""

    func: Callable[[Any], Any]

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        import pydantic

        return pydantic.AfterValidator(self.func).__get_pydantic_core_schema__(source, handler)

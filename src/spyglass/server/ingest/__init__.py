"""Bringing banners in: scanners' files read (:mod:`.formats`), parsed in worker processes
(:mod:`.parsing`) and written to the banner store by its writers (:mod:`.writers`), driven by
:mod:`.importer`. The banner vocabulary (server/banners/) imports none of it."""

"""The ground floor: Kubernetes vocabulary every layer above shares, importing nothing above it.

Which cluster and its clients (``target``, ``rest``, ``dicts``), the kinds aicr
touches (``kinds``), run ids and run-unique names and labels (``names``),
where pods go (``placement``), what a pod's status says (``pod_status``), how
NVIDIA GPUs appear in the API (``gpus``) and how many are free where
(``gpu_inventory``). See docs/development.md, "Layers".
"""

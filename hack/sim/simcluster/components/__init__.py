"""Real platform components the simulated cluster can run: `hack/sim/sim up --with NAME`.

What is modelled (and nothing more): each component is installed as a recipe
would install it: its Namespace, ServiceAccount, RBAC, CRDs, config and
Deployment (or StatefulSet/DaemonSet) go through the API server, and its pods
are played by the process runtime with the component's real binary. Which
binary plays which image is declared here (`Image`): the runtime runs it in
place of the image's entrypoint. Binaries are built from Go modules or
unpacked from a registry package into the sim cache, keyed by the pin in
pins.env (`hack/sim/build-component.sh`, one recipe per component folder).

One folder per component (`<name>/__init__.py` holds its `COMPONENT`,
`<name>/build.sh` its build recipe); `registry.py` lists them. Nothing here
talks to the cluster: `install.py` does.
"""

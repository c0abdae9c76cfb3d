# tests/integration/lib.sh: helpers shared by the integration tests.

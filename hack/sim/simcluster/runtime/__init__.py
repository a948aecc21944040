"""Process runtime: plays the kubelet for the validator's own pods."""

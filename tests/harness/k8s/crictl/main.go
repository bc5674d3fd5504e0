// gpc-crictl: the few crictl commands kubeadm 1.20 runs, for the test nodes only.
// cri-tools is in no repository the test machines reach; this client speaks the same CRI
// (v1alpha2, as kubeadm 1.20 and containerd 1.6 do) through Kubernetes' vendored API.
// Commands: info, version, pods [-q], ps [-a] [-q], images [-q], inspecti IMAGE,
// pull IMAGE, stopp ID..., rmp ID...; global -r/--runtime-endpoint, -i/--image-endpoint.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	pb "k8s.io/cri-api/pkg/apis/runtime/v1alpha2"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "crictl: "+format+"\n", args...)
	os.Exit(1)
}

func dial(endpoint string) *grpc.ClientConn {
	path := strings.TrimPrefix(endpoint, "unix://")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpc.DialContext(ctx, path, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", addr)
		}))
	if err != nil {
		fail("connect %s: %v", endpoint, err)
	}
	return conn
}

func printJSON(v interface{}) {
	out, _ := json.MarshalIndent(v, "", "  ")
	fmt.Println(string(out))
}

func has(args []string, flag string) bool {
	for _, a := range args {
		if a == flag {
			return true
		}
	}
	return false
}

func main() {
	endpoint := "unix:///run/containerd/containerd.sock"
	args := os.Args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		flag := args[0]
		switch {
		case flag == "-r" || flag == "--runtime-endpoint" || flag == "-i" || flag == "--image-endpoint":
			if len(args) < 2 {
				fail("%s needs a value", flag)
			}
			if flag == "-r" || flag == "--runtime-endpoint" {
				endpoint = args[1]
			}
			args = args[2:]
		case strings.HasPrefix(flag, "--runtime-endpoint="):
			endpoint = strings.TrimPrefix(flag, "--runtime-endpoint=")
			args = args[1:]
		default:
			args = args[1:]
		}
	}
	if len(args) == 0 {
		fail("no command (info, version, pods, ps, images, inspecti, pull, stopp, rmp)")
	}
	conn := dial(endpoint)
	defer conn.Close()
	rt := pb.NewRuntimeServiceClient(conn)
	img := pb.NewImageServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, rest := args[0], args[1:]
	quiet := has(rest, "-q") || has(rest, "--quiet")
	switch cmd {
	case "info":
		r, err := rt.Status(ctx, &pb.StatusRequest{Verbose: true})
		if err != nil {
			fail("info: %v", err)
		}
		printJSON(r)
	case "version":
		r, err := rt.Version(ctx, &pb.VersionRequest{})
		if err != nil {
			fail("version: %v", err)
		}
		fmt.Printf("Version:  %s\nRuntimeName:  %s\nRuntimeVersion:  %s\nRuntimeApiVersion:  %s\n",
			r.Version, r.RuntimeName, r.RuntimeVersion, r.RuntimeApiVersion)
	case "pods":
		r, err := rt.ListPodSandbox(ctx, &pb.ListPodSandboxRequest{})
		if err != nil {
			fail("pods: %v", err)
		}
		for _, p := range r.Items {
			if quiet {
				fmt.Println(p.Id)
			} else {
				fmt.Printf("%s\t%s\t%s\t%s\n", p.Id, p.State, p.Metadata.Name, p.Metadata.Namespace)
			}
		}
	case "ps":
		filter := &pb.ContainerFilter{}
		if !has(rest, "-a") && !has(rest, "--all") {
			filter.State = &pb.ContainerStateValue{State: pb.ContainerState_CONTAINER_RUNNING}
		}
		r, err := rt.ListContainers(ctx, &pb.ListContainersRequest{Filter: filter})
		if err != nil {
			fail("ps: %v", err)
		}
		for _, c := range r.Containers {
			if quiet {
				fmt.Println(c.Id)
			} else {
				fmt.Printf("%s\t%s\t%s\t%s\n", c.Id, c.State, c.Metadata.Name, c.PodSandboxId)
			}
		}
	case "images":
		r, err := img.ListImages(ctx, &pb.ListImagesRequest{})
		if err != nil {
			fail("images: %v", err)
		}
		for _, i := range r.Images {
			if quiet {
				fmt.Println(i.Id)
			} else {
				fmt.Printf("%s\t%s\n", strings.Join(i.RepoTags, ","), i.Id)
			}
		}
	case "inspecti":
		if len(rest) == 0 {
			fail("inspecti needs an image")
		}
		r, err := img.ImageStatus(ctx, &pb.ImageStatusRequest{Image: &pb.ImageSpec{Image: rest[len(rest)-1]}})
		if err != nil {
			fail("inspecti: %v", err)
		}
		if r.Image == nil {
			fail("no such image %q present", rest[len(rest)-1])
		}
		printJSON(r)
	case "pull":
		if len(rest) == 0 {
			fail("pull needs an image")
		}
		r, err := img.PullImage(ctx, &pb.PullImageRequest{Image: &pb.ImageSpec{Image: rest[len(rest)-1]}})
		if err != nil {
			fail("pull image %q: %v", rest[len(rest)-1], err)
		}
		fmt.Printf("Image is up to date for %s\n", r.ImageRef)
	case "stopp", "rmp":
		for _, id := range rest {
			if strings.HasPrefix(id, "-") {
				continue
			}
			var err error
			if cmd == "stopp" {
				_, err = rt.StopPodSandbox(ctx, &pb.StopPodSandboxRequest{PodSandboxId: id})
			} else {
				_, err = rt.RemovePodSandbox(ctx, &pb.RemovePodSandboxRequest{PodSandboxId: id})
			}
			if err != nil {
				fail("%s %s: %v", cmd, id, err)
			}
			fmt.Println(id)
		}
	default:
		fail("unknown command %q", cmd)
	}
}
